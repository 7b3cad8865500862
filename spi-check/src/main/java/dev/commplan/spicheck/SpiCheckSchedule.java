package dev.commplan.spicheck;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A schedule as {@link SpiCheckCommunicator} runs it: every call and its two regions resolved once, when
 * the plan is built; an enqueue runs the steps' calls in order (a step's calls form one NCCL group, which
 * here needs nothing: every rank runs them in the same order).
 */
final class SpiCheckSchedule implements CompiledSchedule {
  private final SpiCheckCommunicator owner;
  /** Per step (schedule order), its calls and their send and receive regions. */
  private final Call[][] calls;
  private final MemorySegment[][] sends;
  private final MemorySegment[][] recvs;

  SpiCheckSchedule(SpiCheckCommunicator owner, Schedule schedule) {
    this.owner = owner;
    List<Step> steps = schedule.steps();
    int ranks = owner.size();
    calls = new Call[steps.size()][];
    sends = new MemorySegment[steps.size()][];
    recvs = new MemorySegment[steps.size()][];
    for (int s = 0; s < steps.size(); s++) {
      Step step = steps.get(s);
      int n = step.calls().size();
      calls[s] = new Call[n];
      sends[s] = new MemorySegment[n];
      recvs[s] = new MemorySegment[n];
      for (int i = 0; i < n; i++) {
        CollectiveCall c = step.calls().get(i);
        if (schedule.communicatorOf(c, owner) != owner) {
          throw new UnsupportedOperationException("the spi-check backend has no groups but the world: plan "
              + schedule.planName() + " runs " + c.fields() + " over " + schedule.axisOf(c));
        }
        Call call = new Call(c.collective(), c.dataType(), c.op(), c.root(), c.count(), schedule.planName(),
            step.number(), c.fields());
        calls[s][i] = call;
        sends[s][i] = SpiCheckCommunicator.region(c.sendMemory(), c.sendByteOffset(), call.sendBytes(ranks));
        recvs[s][i] = SpiCheckCommunicator.region(c.recvMemory(), c.recvByteOffset(), call.recvBytes(ranks));
      }
    }
  }

  @Override
  public void enqueueSteps(Stream stream, int fromIndex, int toIndex) {
    for (int s = Math.max(fromIndex, 0); s < Math.min(toIndex, calls.length); s++) {
      for (int i = 0; i < calls[s].length; i++) {
        owner.run(calls[s][i], sends[s][i], recvs[s][i]);
      }
    }
  }
}
