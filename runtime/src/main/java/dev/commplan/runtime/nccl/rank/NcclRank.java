package dev.commplan.runtime.nccl.rank;

import dev.commplan.runtime.nccl.NcclVersion;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.sharing.SharedContextFences;
import java.time.Duration;
import java.util.Objects;

/**
 * One rank of an NCCL communicator, as the layers under the API's {@code NcclCommunicator} see it: its
 * {@code ncclComm_t}, where it runs (rank, size, device), the NCCL it was made with, and what every call
 * asks before it touches NCCL: its lifecycle and failure state ({@link NcclRankState}), its flight record
 * ({@link StepEvents}), its CUDA graphs ({@link RankGraphs}), its {@link NcclFamily}, and where the ranks
 * of its group meet when they share this process's GPU ({@link #meetGroup}). The communicator makes one
 * and hands it to its streams, its direct calls and its compiled schedules; none of them needs the
 * communicator itself.
 */
public final class NcclRank {
  private final long comm;
  private final int rank;
  private final int size;
  private final int device;
  private final NcclVersion version;
  private final Duration timeout;
  /** What messages call its group: {@code world}, or the label of the split that made it. */
  private final String label;
  /** This rank's communicators in this process that fail together: the world's and its splits'. */
  private final NcclFamily family;
  /** Its place among the world's splits, which names its fences ({@link SharedContextFences}). */
  private final SharedContextFences.Lineage lineage;
  private final StepEvents events;
  /** The executable graphs of captured plans, destroyed before the communicator ({@link RankGraphs}). */
  private final RankGraphs graphs;
  private final NcclRankState state;
  /** Where its group's ranks meet, where they share this process's GPU ({@link #meetGroup}); else null. */
  private final SharedContextFences.GroupFence groupFence;

  /**
   * Makes the rank's graphs and state, and finds its group's fence.
   *
   * @param comm the initialized {@code ncclComm_t}
   * @param seat where the rank sits in it ({@link Seat#of})
   * @param label what messages call its group: {@code world}, or the label of the split that made it
   * @param events its flight record, made on its device
   * @param resources what aborting and closing free besides the communicator (its memory, streams, events)
   */
  public NcclRank(long comm, Seat seat, NcclVersion version, Duration timeout, String label, NcclFamily family,
      SharedContextFences.Lineage lineage, StepEvents events, NcclRankState.Resources resources) {
    this.comm = comm;
    this.rank = seat.rank();
    this.size = seat.size();
    this.device = seat.device();
    this.version = version;
    this.timeout = timeout;
    this.label = label;
    this.family = Objects.requireNonNull(family, "family");
    this.lineage = lineage;
    this.events = events;
    this.graphs = new RankGraphs(device);
    this.state = new NcclRankState(comm, rank, size, device, label, family, timeout, events, graphs, resources);
    SharedContextFences fences = family.sharing().fences();
    this.groupFence = fences != null ? fences.groupFence(lineage, size) : null;
  }

  /** {@return the {@code ncclComm_t}} */
  public long comm() {
    return comm;
  }

  /** {@return this rank's number in its group} */
  public int rank() {
    return rank;
  }

  /** {@return the number of ranks of its group} */
  public int size() {
    return size;
  }

  /** {@return the CUDA device it runs on} */
  public int device() {
    return device;
  }

  /** {@return the NCCL library's version} */
  public NcclVersion version() {
    return version;
  }

  /** {@return the timeout of its waits ({@code CommOptions.timeout()})} */
  public Duration timeout() {
    return timeout;
  }

  /** {@return what messages call its group: {@code world}, or the label of the split that made it} */
  public String label() {
    return label;
  }

  /** {@return its lifecycle and failure state, which every call asks first} */
  public NcclRankState state() {
    return state;
  }

  /** {@return its flight record} */
  public StepEvents events() {
    return events;
  }

  /** {@return its CUDA graphs and the probe that tells whether a stream is being captured} */
  public RankGraphs graphs() {
    return graphs;
  }

  /** {@return its family: the world and its splits, which fail together} */
  public NcclFamily family() {
    return family;
  }

  /** {@return its place among the world's splits} */
  public SharedContextFences.Lineage lineage() {
    return lineage;
  }

  /** {@code cudaSetDevice} to its device, for the calling thread. */
  public void useDevice() {
    CheckedCuda.cudaSetDevice(device);
  }

  /**
   * Where ranks share this process's GPU, waits for the group's other ranks ({@link SharedContextFences}).
   *
   * @return how long it waited there, in nanoseconds: the part of this rank's wait for its peers that the host
   *     spends before it launches (the flight record adds it to the collective's, {@link StepEvents}); 0 where
   *     ranks do not share the GPU (the clock is not read then)
   */
  public long meetGroup() {
    if (groupFence == null) {
      return 0;
    }
    long start = System.nanoTime();
    groupFence.pass(timeout, state::toldToStop);
    return System.nanoTime() - start;
  }

  /** Its communicator is being released: it meets its group no more. */
  public void leaveGroup() {
    if (groupFence != null) {
      groupFence.leave();
    }
  }

  /**
   * Whether memory of {@code other}'s communicator serves this one: the same family (the world's and its
   * splits') on the same device.
   */
  public boolean sharesMemoryWith(NcclRank other) {
    return other == this || other.family == family && other.device == device;
  }

  /** {@code NcclCommunicator[rank 0 of 2, device 0]} ({@link NcclRankState#describe()}). */
  @Override
  public String toString() {
    return state.describe();
  }
}
