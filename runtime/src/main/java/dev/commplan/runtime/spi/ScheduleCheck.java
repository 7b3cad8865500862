package dev.commplan.runtime.spi;

import static dev.commplan.runtime.rules.CallRules.checkOpen;
import static dev.commplan.runtime.rules.CallRules.rootInRange;
import static dev.commplan.runtime.rules.CallRules.sharesMemory;

import dev.commplan.model.Collective;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.rules.RuleSubject.Direct;
import java.util.Objects;

/**
 * What {@link AbstractCommunicator#compile} checks before the backend compiles a schedule, so that no
 * backend is handed memory it cannot address: the schedule built for the communicator's size, every call's
 * memory open and usable by the communicator ({@code DeviceMemory.Allocator.sharesMemoryWith}), every
 * region inside its block, ops, roots and peers present and in range, every group a communicator of this
 * one's family. A plan's schedule passes by construction; a hand-built one may not.
 */
final class ScheduleCheck {
  private ScheduleCheck() {}

  /**
   * Checks {@code schedule} before {@code comm}'s backend compiles it.
   *
   * @throws IllegalArgumentException naming the step, the call's fields and what is wrong
   * @throws IllegalStateException if {@code comm} or a communicator the schedule runs over is closed
   */
  static void check(Communicator comm, Schedule schedule) {
    Objects.requireNonNull(schedule, "schedule");
    checkOpen(comm);
    if (schedule.ranks() != comm.size()) {
      throw new IllegalArgumentException(
          "schedule of plan " + schedule.planName() + " was built for " + schedule.ranks()
              + " ranks, but this communicator has " + comm.size());
    }
    for (Step step : schedule.steps()) {
      for (CollectiveCall call : step.calls()) {
        Collective c = call.collective();
        String axis = schedule.axisOf(call);
        String where = "plan " + schedule.planName() + ", step " + step.number() + ", " + c.label()
            + (axis.isEmpty() ? "" : " over " + axis) + " of " + call.fields();
        if (call.count() <= 0) {
          throw new IllegalArgumentException(where + ": count must be > 0, was " + call.count());
        }
        if (c.hasOp() != (call.op() != null)) {
          throw new IllegalArgumentException(
              where + ": op must be " + (c.hasOp() ? "set" : "null") + ", was " + call.op());
        }
        Communicator over = schedule.communicatorOf(call, comm);
        if (over != comm) {
          checkOpen(over);
          if (!sharesMemory(over, comm)) {
            throw new IllegalArgumentException(where + ": it runs over " + over + " (" + over.groupLabel() + "), which"
                + " cannot use the memory of " + comm + "; a plan's groups must be this rank's communicators of one"
                + " family (a mesh's axes) of the " + comm.backendName() + " backend");
          }
        }
        int ranks = over.size();
        if (c.hasRoot()) {
          rootInRange(Direct.CALL, c, over, call.root(), ranks);
        }
        if (c.pointToPoint() ? call.peer() < -1 || call.peer() >= ranks : call.peer() != -1) {
          throw new IllegalArgumentException(where + ": peer " + call.peer() + (c.pointToPoint() ? " is neither a rank"
              + " of this " + ranks + "-rank communicator nor -1 (no transfer)" : "; only a send or receive has one"));
        }
        checkRegion(where + ", send side", comm, call.sendMemory(), call.sendByteOffset(), call.sendBytes(ranks));
        checkRegion(where + ", receive side", comm, call.recvMemory(), call.recvByteOffset(), call.recvBytes(ranks));
      }
    }
  }

  private static void checkRegion(String where, Communicator comm, DeviceMemory memory, long offset, long bytes) {
    String tag = RuleId.BAD_BUFFER.tag() + " ";
    if (!sharesMemory(comm, memory.owner())) {
      throw new IllegalArgumentException(
          tag + where + ": the memory belongs to " + memory.owner().backendName() + " rank " + memory.owner().rank()
              + ", not to this communicator (" + comm.backendName() + " rank " + comm.rank() + ")");
    }
    if (memory.isClosed()) {
      throw new IllegalArgumentException(tag + where + ": the memory has been freed");
    }
    if (offset < 0 || offset > memory.byteSize() - bytes) {
      throw new IllegalArgumentException(
          tag + where + ": bytes [" + offset + ", " + (offset + bytes) + ") do not fit in a block of "
              + memory.byteSize());
    }
  }
}
