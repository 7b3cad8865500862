package dev.commplan.runtime.nccl.calls;

import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.NonFiniteKernels;
import dev.commplan.runtime.nccl.memory.NcclMemory;
import dev.commplan.runtime.nccl.rank.NcclRank;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import dev.commplan.runtime.nccl.streams.NcclStream;
import dev.commplan.runtime.plan.NonFiniteScan;
import java.util.List;

/**
 * The finite check's search of one unit's send data on the GPU ({@link NonFiniteScan}; {@code
 * CompiledSchedule.nonFiniteScan} of the NCCL backend): per region, the search kernel and the value kernel of
 * {@link NonFiniteKernels}, on the unit's stream, in stream order after the work enqueued there before (which may
 * write the fields) and before the verdict's all-gather, which the plan enqueues next on the same stream. Nothing
 * is copied to the host here: the findings stay on the device for the all-gather, and the verdict copies the
 * gathered findings (16 bytes per region and rank) to the host once it has synchronized the stream.
 *
 * <p>Everything a launch needs is laid out once, when the plan is built (each region's device address, count,
 * mask and finding, and the kernels, loaded for the device then): an enqueue is a few checks, one {@code
 * cudaMemsetAsync} and two {@code cuLaunchKernel} per region, allocating nothing.
 */
public final class NcclNonFiniteScan implements NonFiniteScan {
  /** Bytes of one region's findings: the first index and its bits. */
  private static final long FINDING_BYTES = 2L * Long.BYTES;

  private final NcclRank rank;
  private final NcclRankState state;
  private final NonFiniteKernels kernels;
  private final NonFiniteKernels.Prepared[] launches;
  private final NcclMemory[] memories;
  private final long findings;
  private final long findingBytes;

  /**
   * Lays out the launches of {@code regions} on {@code rank}'s device, loading the kernels there if this is the
   * first plan with the check on it (a synchronous load: see {@link NonFiniteKernels#on}).
   *
   * @param rank the compiling communicator's rank, whose streams the unit is enqueued on
   * @param regions the unit's regions, in the plan's order: memory of the rank's family, on its device
   * @param findings where the search writes, per region, the first index and its bits: memory of the rank's family
   */
  public NcclNonFiniteScan(NcclRank rank, List<Region> regions, U64Buffer findings) {
    this.rank = rank;
    this.state = rank.state();
    if (findings.length() < 2L * regions.size()) {
      throw new IllegalArgumentException("the findings of " + regions.size() + " regions need " + 2 * regions.size()
          + " elements, not " + findings.length());
    }
    this.findings = NcclMemory.pointer(findings);
    this.findingBytes = FINDING_BYTES * regions.size();
    rank.useDevice();
    this.kernels = NonFiniteKernels.on(rank.device());
    this.launches = new NonFiniteKernels.Prepared[regions.size()];
    this.memories = new NcclMemory[regions.size()];
    for (int i = 0; i < regions.size(); i++) {
      Region r = regions.get(i);
      memories[i] = ncclMemory(r.memory());
      launches[i] = kernels.prepare(memories[i].rawAddress() + r.byteOffset(), r.count(), r.type().byteSize(),
          r.mask(), this.findings + FINDING_BYTES * i);
    }
  }

  private NcclMemory ncclMemory(DeviceMemory memory) {
    if (memory instanceof NcclMemory m) {
      return m;
    }
    throw new IllegalArgumentException("the finite check on " + rank + " searches NCCL backend memory, not "
        + memory);
  }

  /**
   * Enqueues, on {@code stream}: one {@code cudaMemsetAsync} that sets every finding to all ones, then per region its
   * search and its value kernel. Returns before any of it has run on the device.
   *
   * <p>CUDA: {@code cudaMemsetAsync} on device memory is asynchronous with respect to the host and ordered on
   * {@code stream} like a kernel; {@code cuLaunchKernel} returns once the launch is queued ({@link
   * NonFiniteKernels#enqueue}). So the search sees the fields as the work enqueued before it on this stream leaves
   * them (the earlier steps of the same execute), and the verdict's all-gather, enqueued after it on the same stream,
   * sends what it found. Work on other streams is not ordered with it: as with the reduction itself, the caller
   * makes {@code stream} wait for the producers of the fields (an event, or a bucketed plan's {@code ready}).
   */
  @Override
  public void enqueue(Stream stream) {
    state.ensureUsable();
    long s = NcclStream.handleOf(stream, rank);
    for (NcclMemory m : memories) {
      if (m.isClosed()) {
        throw new IllegalStateException("the finite check on " + rank + ": " + m + " was freed after the plan was"
            + " built");
      }
    }
    rank.useDevice(); // the kernels are the device's primary context's, which cudaSetDevice makes current
    CheckedCuda.cudaMemsetAsync(findings, 0xFF, findingBytes, s);
    for (NonFiniteKernels.Prepared launch : launches) {
      kernels.enqueue(launch, s);
    }
  }

  @Override
  public String toString() {
    return "NcclNonFiniteScan[" + launches.length + " regions, " + rank + "]";
  }
}
