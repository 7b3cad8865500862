package dev.commplan.spicheck;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A schedule as {@link SpiCheckCommunicator} runs it: every call resolved once, when the plan is built, to
 * the communicator of its group ({@link Schedule#communicatorOf}: the plan's own, or a mesh axis's) and its
 * two regions. A step's calls form one group of the backend, whose calls must not wait for each other: an
 * enqueue runs each step's sends first (they never wait), then its collectives in the schedule's order (the
 * same on every rank), then its receives. A send or receive without a peer on this rank is left out.
 */
final class SpiCheckSchedule implements CompiledSchedule {
  /** One resolved call: where it runs and on what. */
  private record Resolved(SpiCheckCommunicator over, Call call, MemorySegment send, MemorySegment recv) {}

  /** Per step (schedule order), its calls in the order they run. */
  private final Resolved[][] steps;

  SpiCheckSchedule(SpiCheckCommunicator owner, Schedule schedule) {
    List<Step> all = schedule.steps();
    steps = new Resolved[all.size()][];
    for (int s = 0; s < all.size(); s++) {
      Step step = all.get(s);
      List<Resolved> calls = new ArrayList<>();
      for (CollectiveCall c : step.calls()) {
        if (!c.transfers()) {
          continue; // a send or receive whose peer falls outside the group on this rank
        }
        SpiCheckCommunicator over = (SpiCheckCommunicator) schedule.communicatorOf(c, owner);
        int ranks = schedule.sizeOf(c);
        int root = c.collective().pointToPoint() ? c.peer() : c.root();
        Call call = new Call(c.collective(), c.dataType(), c.op(), root, c.count(), schedule.planName(),
            step.number(), c.fields());
        calls.add(new Resolved(over, call,
            SpiCheckCommunicator.region(c.sendMemory(), c.sendByteOffset(), call.sendBytes(ranks)),
            SpiCheckCommunicator.region(c.recvMemory(), c.recvByteOffset(), call.recvBytes(ranks))));
      }
      calls.sort(Comparator.comparingInt(r -> phase(r.call().collective()))); // stable: collectives keep their order
      steps[s] = calls.toArray(Resolved[]::new);
    }
  }

  /** Sends first, collectives next, receives last. */
  private static int phase(Collective collective) {
    return collective == Collective.SEND ? 0 : collective == Collective.RECV ? 2 : 1;
  }

  @Override
  public void enqueueSteps(Stream stream, int fromIndex, int toIndex) {
    for (int s = Math.max(fromIndex, 0); s < Math.min(toIndex, steps.length); s++) {
      for (Resolved r : steps[s]) {
        r.over().run(r.call(), r.send(), r.recv());
      }
    }
  }
}
