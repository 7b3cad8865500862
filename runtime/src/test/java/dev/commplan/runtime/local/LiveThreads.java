package dev.commplan.runtime.local;

import java.util.List;

/** The JVM's live threads whose names start with a prefix: the backend's threads, for leak and abort tests. */
final class LiveThreads {
  private LiveThreads() {}

  /** Names of the live threads named {@code prefix...} ({@code "commplan-local-"}: rank threads and stream workers). */
  static List<String> named(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(name -> name.startsWith(prefix))
        .toList();
  }
}
