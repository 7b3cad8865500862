package dev.commplan.runtime.nccl.rank;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.commplan.runtime.guard.Failures;
import dev.commplan.runtime.nccl.CudaException;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One rank's CUDA graphs: the executable graphs of its live captured plans, and the probe that tells
 * whether a stream is being captured.
 *
 * <p><b>Graphs die before the communicator.</b> A graph that captured NCCL work holds a reference to the
 * communicator's resources (NCCL hands the graph a CUDA user object), and since NCCL 2.26 {@code
 * ncclCommDestroy} and {@code ncclCommAbort} poll until no such graph is left ({@code commDestroySync}:
 * "keep polling until all graphs referencing us die"). Destroying the communicator first would hang. So
 * {@link NcclRankState} calls {@link #destroyAll} before either, and after that {@link #add} refuses new
 * graphs. Destroying an executable graph whose launch is still running does not stop it: CUDA frees it
 * when it completes (and {@code ncclCommAbort} first makes NCCL's kernels give up).
 *
 * <p>Thread-safety: {@link #destroyAll} may run on the cluster's watchdog thread ({@code
 * abortFromOutside}) while the rank's thread launches; a captured graph keeps itself alive until a launch
 * in progress has returned ({@link Graph#closeBecause}). {@link #isStreamCapturing} uses one out-parameter, so it
 * is for the communicator's one thread.
 */
public final class RankGraphs {
  /** A captured plan's executable graph, as the rank destroys it. */
  public interface Graph {
    /**
     * Closes it, naming {@code why} in the messages of later launches: destroys it now, or right after a
     * launch in progress returns; idempotent; any thread.
     */
    void closeBecause(String why);
  }

  private final int device;
  private final Set<Graph> live = new LinkedHashSet<>(); // guarded by this
  private String closedBecause; // guarded by this; set once, by destroyAll
  /** The out-parameter of cudaStreamIsCapturing: made once, so that the probe allocates nothing. */
  private final MemorySegment captureStatus = Arena.ofAuto().allocate(JAVA_INT);

  public RankGraphs(int device) {
    this.device = device;
  }

  public int device() {
    return device;
  }

  /**
   * Whether {@code cudaStream} is being captured into a CUDA graph (an invalidated capture counts: it is
   * still open until its owner ends it, and querying or synchronizing the stream is still refused).
   * One critical downcall, no allocation.
   *
   * @throws CudaException if CUDA cannot say (the legacy stream while a blocking stream captures)
   */
  public boolean isStreamCapturing(long cudaStream) {
    return CheckedCuda.cudaStreamIsCapturing(cudaStream, captureStatus);
  }

  /** Registers a new graph; false (the caller destroys it) once {@link #destroyAll} has run. */
  public synchronized boolean add(Graph graph) {
    if (closedBecause != null) {
      return false;
    }
    live.add(graph);
    return true;
  }

  /** A graph was destroyed. */
  public synchronized void remove(Graph graph) {
    live.remove(graph);
  }

  /** How many graphs are alive (tests, messages). */
  public synchronized int liveCount() {
    return live.size();
  }

  /**
   * Destroys every live graph (one whose launch is in progress right after that launch returns) and
   * refuses new ones; idempotent. Errors are added to {@code failure} (or become it).
   *
   * @param why for the messages of later launches: "its communicator was closed"
   */
  public RuntimeException destroyAll(String why, RuntimeException failure) {
    List<Graph> graphs;
    synchronized (this) {
      if (closedBecause == null) {
        closedBecause = why;
      }
      graphs = new ArrayList<>(live);
    }
    if (!graphs.isEmpty()) {
      CheckedCuda.cudaSetDeviceQuietly(device); // maybe the watchdog's thread
    }
    for (Graph graph : graphs) {
      try {
        graph.closeBecause(why);
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
    }
    return failure;
  }
}
