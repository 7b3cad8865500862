package dev.commplan.runtime.launch;

/**
 * This process's place in a multi-process job: what {@link LaunchEnvironment} read from the launcher's
 * variables.
 *
 * @param rank this process's rank, in {@code [0, size)}
 * @param size the number of processes (ranks) in the job
 * @param localRank this process's index among the processes on its node; picks the GPU ({@link #device})
 * @param masterAddr the host rank 0's rendezvous listens on, as the other ranks reach it; null when the
 *     environment does not say and it cannot be inferred (then the rendezvous needs it explicitly)
 * @param masterPort the rendezvous port, in {@code [1, 65535]}
 * @param launcher where rank and size came from
 */
public record ProcessInfo(int rank, int size, int localRank, String masterAddr, int masterPort, Launcher launcher) {
  /**
   * Checks that the values are consistent.
   *
   * @param rank this process's rank, in {@code [0, size)}
   * @param size the number of processes (ranks) in the job, at least 1
   * @param localRank this process's index among the processes on its node, in {@code [0, size)}
   * @param masterAddr rank 0's rendezvous host, or null when unknown
   * @param masterPort the rendezvous port, in {@code [1, 65535]}
   * @param launcher where rank and size came from
   * @throws IllegalArgumentException naming the value that is out of range
   */
  public ProcessInfo {
    if (size < 1) {
      throw new IllegalArgumentException("size must be >= 1, was " + size);
    }
    if (rank < 0 || rank >= size) {
      throw new IllegalArgumentException("rank " + rank + " is not in [0, " + size + ")");
    }
    if (localRank < 0 || localRank >= size) {
      throw new IllegalArgumentException("local rank " + localRank + " is not in [0, " + size + ")");
    }
    if (masterPort < 1 || masterPort > 65535) {
      throw new IllegalArgumentException("port " + masterPort + " is not in [1, 65535]");
    }
  }

  /**
   * The CUDA device for this process: {@code localRank % deviceCount}. With one visible device per
   * process (Slurm's {@code --gpus-per-task=1}, or {@code CUDA_VISIBLE_DEVICES} set per rank) that is 0.
   *
   * @param deviceCount the number of CUDA devices this process sees, at least 1
   * @return the device ordinal to bind this process's thread to ({@code cudaSetDevice})
   * @throws IllegalArgumentException if {@code deviceCount < 1}
   */
  public int device(int deviceCount) {
    if (deviceCount < 1) {
      throw new IllegalArgumentException("there are no CUDA devices (deviceCount = " + deviceCount + ")");
    }
    return localRank % deviceCount;
  }

  @Override
  public String toString() {
    return "rank " + rank + " of " + size + " (local rank " + localRank + ", from " + launcher + ", rendezvous "
        + (masterAddr == null ? "?" : masterAddr) + ":" + masterPort + ")";
  }
}
