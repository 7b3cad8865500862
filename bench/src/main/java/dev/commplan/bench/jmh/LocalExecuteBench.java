package dev.commplan.bench.jmh;

/** {@link ExecuteBench} on the local backend (one rank: a thread of the JVM, off-heap memory). */
public class LocalExecuteBench extends ExecuteBench {
  @Override
  protected String backend() {
    return "local";
  }
}
