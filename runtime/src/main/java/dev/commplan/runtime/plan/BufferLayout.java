package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DeviceMemory;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where the plan-owned buffers lie in the plan's one allocation, so that the schedule can coalesce them.
 * Calls are taken in execution order and put in layout groups by (step, collective, data type, op, root,
 * in place, the group or mesh axis they run over). Each group gets a send block and, out of place, a receive block; each block starts at a
 * multiple of {@value #ALIGNMENT} bytes and holds the group's buffers back to back in declaration order.
 * A buffer used by several collectives is placed with its first use; buffers used by none come last, one
 * block each. Bound buffers are not placed.
 *
 * @param offsets the byte offset of each plan-owned buffer, indexed by handle (0 for bound ones)
 * @param bytes the size of the allocation: 0 when the plan owns no buffer
 */
record BufferLayout(long[] offsets, long bytes) {
  /** Alignment of each block, in bytes (what {@code cudaMalloc} guarantees). */
  static final int ALIGNMENT = 256;

  /** What makes calls coalescable: also the group (mesh axis) they run over, as {@link ScheduleBuilder} requires. */
  private record GroupKey(int step, Collective collective, DataType type, ReduceOp op, int root, boolean inPlace,
      int group) {
    static GroupKey of(Declarations.Call c, DataType type) {
      return new GroupKey(c.step(), c.collective(), type, c.op(), c.root(), c.inPlace(), c.group());
    }
  }

  static BufferLayout of(Declarations declarations, List<Declarations.Call> ordered) {
    Map<GroupKey, List<Declarations.Call>> groups = new LinkedHashMap<>();
    for (Declarations.Call c : ordered) {
      groups.computeIfAbsent(GroupKey.of(c, declarations.field(c.send()).type()), k -> new ArrayList<>()).add(c);
    }
    long[] offsets = new long[declarations.fields().size()];
    Set<Integer> placed = new HashSet<>();
    long end = 0;
    for (List<Declarations.Call> group : groups.values()) {
      group.sort(Comparator.comparingInt(Declarations.Call::send));
      end = placeBlock(declarations, group.stream().map(Declarations.Call::send).toList(), offsets, placed, end);
      if (!group.getFirst().inPlace()) {
        end = placeBlock(declarations, group.stream().map(Declarations.Call::recv).toList(), offsets, placed, end);
      }
    }
    for (Declarations.Field f : declarations.fields()) {
      end = placeBlock(declarations, List.of(f.handle()), offsets, placed, end);
    }
    long bytes = 0;
    for (Declarations.Field f : declarations.fields()) {
      if (f.bound() == null) {
        bytes = Math.max(bytes, offsets[f.handle()] + f.count() * f.type().byteSize());
      }
    }
    return new BufferLayout(offsets, bytes);
  }

  /**
   * The plan-owned memory; a backend that cannot allocate it says how much it was asked for and has, and
   * this names the plan and its largest fields.
   */
  DeviceMemory allocate(String planName, Communicator comm, Declarations declarations) {
    try {
      return DeviceMemory.allocate(comm, bytes());
    } catch (IllegalArgumentException | OutOfMemoryError e) {
      StringBuilder largest = new StringBuilder();
      declarations.fields().stream().filter(f -> f.bound() == null)
          .sorted((a, b) -> Long.compare(b.count() * b.type().byteSize(), a.count() * a.type().byteSize())).limit(3)
          .forEach(f -> largest.append(largest.isEmpty() ? "" : ", ").append("'").append(f.field()).append("' @Shape(")
              .append(f.shape()).append(") = ").append(f.count()).append(" elements of ").append(f.type()).append(", ")
              .append(f.count() * f.type().byteSize()).append(" bytes"));
      PlanBuildException failure = new PlanBuildException("plan " + planName + ": its " + bytes()
          + " bytes of plan-owned memory could not be allocated on rank " + comm.rank() + " (" + e.getMessage()
          + "); the largest fields: " + largest + ". Use smaller dims, or bind buffers of your own");
      failure.initCause(e);
      throw failure;
    }
  }

  /** Each field's buffer, indexed by handle: its view of {@code owned}, or the bound buffer. */
  Buffer[] views(Declarations declarations, DeviceMemory owned) {
    Buffer[] views = new Buffer[declarations.fields().size()];
    for (Declarations.Field f : declarations.fields()) {
      views[f.handle()] = f.bound() != null ? f.bound() : Buffer.view(f.type(), owned, offsets[f.handle()], f.count());
    }
    return views;
  }

  /** Places the not yet placed plan-owned buffers of {@code handles} back to back in a new aligned block. */
  private static long placeBlock(
      Declarations declarations, List<Integer> handles, long[] offsets, Set<Integer> placed, long end) {
    long cursor = alignUp(end);
    boolean any = false;
    for (int handle : handles) {
      Declarations.Field f = declarations.field(handle);
      if (f.bound() != null || !placed.add(handle)) {
        continue;
      }
      offsets[handle] = cursor;
      cursor = Math.addExact(cursor, Math.multiplyExact(f.count(), (long) f.type().byteSize()));
      any = true;
    }
    return any ? cursor : end;
  }

  private static long alignUp(long offset) {
    return (offset + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
  }
}
