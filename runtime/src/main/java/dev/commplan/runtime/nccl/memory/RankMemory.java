package dev.commplan.runtime.nccl.memory;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.guard.Failures;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The device memory of one communicator: the blocks allocated through it (its {@link DeviceAllocator},
 * zeroed through its {@link HostCopies}) and the device pointers wrapped for it, each until it is closed,
 * and all of them, at the latest, when the communicator is released ({@link #closeAll}).
 */
public final class RankMemory {
  private final Communicator owner;
  private final HostCopies copies;
  private final DeviceAllocator allocator;
  /** The blocks not closed yet: closed with the communicator at the latest. */
  private final Set<NcclMemory> live = ConcurrentHashMap.newKeySet();

  /**
   * @param owner the communicator the blocks belong to
   * @param copies the rank's host copies, which also zero new blocks
   * @param allocator how the rank gets and gives back device memory ({@link DeviceAllocator#choose})
   */
  public RankMemory(Communicator owner, HostCopies copies, DeviceAllocator allocator) {
    this.owner = owner;
    this.copies = copies;
    this.allocator = allocator;
  }

  /** A new zeroed block of {@code bytes} ({@link NcclMemory#allocate}), kept until it is closed. */
  public NcclMemory allocate(long bytes) {
    NcclMemory memory = NcclMemory.allocate(owner, copies, allocator, live::remove, bytes);
    live.add(memory);
    return memory;
  }

  /** A view of {@code bytes} of device memory at {@code address} that someone else owns (never freed here). */
  public NcclMemory wrap(long address, long bytes) {
    NcclMemory memory = new NcclMemory(owner, copies, allocator, live::remove, address, bytes, false);
    live.add(memory);
    return memory;
  }

  /** Closes every block still open; returns {@code failure} with what failed added (or the first failure). */
  public RuntimeException closeAll(RuntimeException failure) {
    for (NcclMemory memory : new ArrayList<>(live)) {
      try {
        memory.close();
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
    }
    return failure;
  }

  /** {@return the blocks not closed yet, for tests} */
  public List<NcclMemory> live() {
    return List.copyOf(live);
  }
}
