package dev.commplan.runtime;

import dev.commplan.runtime.launch.ProcessInfo;
import java.util.List;

/**
 * A backend that is not CommPlan's, found through the test class path's {@code
 * META-INF/services/dev.commplan.runtime.Backend}: its cluster runs nothing and only knows its size.
 */
public final class TestEchoBackend implements Backend {
  @Override
  public String name() {
    return "test-echo";
  }

  @Override
  public String unavailableReason() {
    return null;
  }

  @Override
  public Cluster cluster(int ranks, CommOptions options) {
    return new Cluster() {
      @Override
      public int size() {
        return ranks;
      }

      @Override
      public String backendName() {
        return "test-echo";
      }

      @Override
      public void run(RankTask task) {
        throw new UnsupportedOperationException("test-echo runs nothing");
      }

      @Override
      public <T> List<T> call(RankFunction<T> function) {
        throw new UnsupportedOperationException("test-echo runs nothing");
      }

      @Override
      public void close() {}
    };
  }

  @Override
  public Communicator processCommunicator(ProcessInfo info, CommOptions options) {
    throw new IllegalArgumentException("test-echo has no process communicator");
  }
}
