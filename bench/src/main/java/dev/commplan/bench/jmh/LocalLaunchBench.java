package dev.commplan.bench.jmh;

/** {@link LaunchBench} on the local backend, where {@code launch()} executes the plan (no CUDA graphs). */
public class LocalLaunchBench extends LaunchBench {
  @Override
  protected String backend() {
    return "local";
  }
}
