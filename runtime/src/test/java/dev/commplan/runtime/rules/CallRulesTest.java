package dev.commplan.runtime.rules;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.model.Collective;
import dev.commplan.model.RuleId;
import java.lang.management.ManagementFactory;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.Executable;

/**
 * CallRules: the rules as the direct collective API checks them ({@code spi.AbstractCommunicator} calls
 * {@link CallRules#checkCollective} for every backend) and their messages; that a plan and a direct call
 * report one rule under one id; that a schedule is checked before a backend compiles it; that a passing
 * direct check allocates nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CallRulesTest {
  private LocalCluster cluster;
  private Communicator comm; // rank 1 of 2
  private Communicator other;

  @BeforeAll
  void start() {
    cluster = new LocalCluster(2);
    List<Communicator> comms = cluster.call(c -> c);
    comm = comms.get(1);
    other = comms.get(0);
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  private static void assertMessage(Class<? extends Throwable> type, Executable call, String... parts) {
    String message = assertThrows(type, call).getMessage();
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }
  }

  @Test
  void countsAreCheckedWithTheCountsInTheMessage() {
    try (F32Buffer four = F32Buffer.allocate(comm, 4); F32Buffer seven = F32Buffer.allocate(comm, 7)) {
      assertMessage(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, four, seven, ReduceOp.SUM, -1, comm.stream()),
          "all-reduce on rank 1", "4", "7");
      assertMessage(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.BROADCAST, comm, four, seven, null, 0, comm.stream()),
          "broadcast", "4", "7");
      assertMessage(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.ALL_GATHER, comm, four, seven, null, -1, comm.stream()),
          "all-gather", "recv has 7", "2 × 4 = 8");
      assertMessage(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.REDUCE_SCATTER, comm, seven, four, ReduceOp.SUM, -1,
              comm.stream()),
          "reduce-scatter", "send has 7", "2 × 4 = 8");
    }
  }

  @Test
  void validCallsReturnNcclsCount() {
    try (F32Buffer three = F32Buffer.allocate(comm, 3); F32Buffer six = F32Buffer.allocate(comm, 6)) {
      assertEquals(3, CallRules.checkCollective(Collective.ALL_REDUCE, comm, three, three, ReduceOp.MAX, -1,
          comm.stream()));
      assertEquals(3, CallRules.checkCollective(Collective.ALL_GATHER, comm, three, six, null, -1, comm.stream()));
      assertEquals(3, CallRules.checkCollective(Collective.REDUCE_SCATTER, comm, six, three, ReduceOp.AVG, -1,
          comm.stream()));
      assertEquals(6, CallRules.checkCollective(Collective.BROADCAST, comm, six, six, null, 1, comm.stream()));
    }
  }

  @Test
  void typesCommunicatorsStreamsRootsAndClosedBuffersAreChecked() {
    try (F32Buffer f = F32Buffer.allocate(comm, 4);
        I32Buffer i = I32Buffer.allocate(comm, 4);
        F32Buffer elsewhere = F32Buffer.allocate(other, 4)) {
      assertMessage(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, f, i, ReduceOp.SUM, -1, comm.stream()),
          "F32", "I32");
      assertMessage(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, elsewhere, f, ReduceOp.SUM, -1, comm.stream()),
          "send", "rank 0");
      assertMessage(IllegalArgumentException.class,
          () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, f, f, ReduceOp.SUM, -1, other.stream()),
          "stream", "rank 0");
      assertMessage(IllegalArgumentException.class,
          () -> CallRules.checkCollective(Collective.BROADCAST, comm, f, f, null, 2, comm.stream()), "root 2",
              "[0, 2)");
      assertThrows(NullPointerException.class,
          () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, f, f, null, -1, comm.stream()));
    }
    F32Buffer closed = F32Buffer.allocate(comm, 4);
    closed.close();
    assertMessage(BufferBindingException.class,
        () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, closed, closed, ReduceOp.SUM, -1,
            comm.stream()), "closed");
  }

  @Test
  void overlapOtherThanNcclsInPlaceArrangementIsRefused() {
    try (F32Buffer block = F32Buffer.allocate(comm, 8)) {
      Buffer firstHalf = Buffer.view(DataType.F32, block.memory(), 0, 4);
      Buffer secondHalf = Buffer.view(DataType.F32, block.memory(), 16, 4);
      Buffer shifted = Buffer.view(DataType.F32, block.memory(), 4, 4);
      assertMessage(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, firstHalf, shifted, ReduceOp.SUM, -1,
              comm.stream()), "overlap");
      // AllGather in place on rank 1 of 2: send is recv's second half, not its first.
      assertEquals(4, CallRules.checkCollective(Collective.ALL_GATHER, comm, secondHalf, block, null, -1,
          comm.stream()));
      assertMessage(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.ALL_GATHER, comm, firstHalf, block, null, -1, comm.stream()),
          "in-place", "byte 16");
      assertTrue(CallRules.isInPlace(Collective.ALL_GATHER, secondHalf, block, 1));
      assertFalse(CallRules.isInPlace(Collective.ALL_GATHER, firstHalf, block, 1));
      assertTrue(CallRules.isInPlace(Collective.REDUCE_SCATTER, block, secondHalf, 1));
      // Disjoint regions of one block are simply out of place.
      assertEquals(4, CallRules.checkCollective(Collective.ALL_REDUCE, comm, firstHalf, secondHalf, ReduceOp.SUM,
          -1, comm.stream()));
    }
  }

  // ---- One rule, one id, for plans and direct calls -----------------------------------------------

  private static String tagOf(Class<? extends Throwable> type, Executable call) {
    String message = assertThrows(type, call).getMessage();
    assertTrue(message.startsWith("[CommPlan/"), message);
    return message.substring(0, message.indexOf(']') + 1);
  }

  private PlanBuilder plan() {
    return new PlanBuilder("p.Rules", comm, 0).fingerprintCheck(false); // built on one rank only
  }

  @Test
  void aPlanAndADirectCallReportTheSameRuleUnderTheSameId() {
    try (F32Buffer four = F32Buffer.allocate(comm, 4);
        F32Buffer seven = F32Buffer.allocate(comm, 7);
        I32Buffer ints = I32Buffer.allocate(comm, 4)) {
      String f = "{\"n\"}";
      // count rules: the id comes from the collective's CountRule; 4 into 7 breaks every one of them
      for (Collective c : Collective.values()) {
        if (c.pointToPoint()) {
          continue; // one buffer: no count rule between two (pointToPoint() below)
        }
        ReduceOp op = c.hasOp() ? ReduceOp.SUM : null;
        String direct = tagOf(BufferBindingException.class,
            () -> CallRules.checkCollective(c, comm, four, seven, op, 0, comm.stream()));
        PlanBuilder b = plan();
        b.collective(0, c, b.buffer("s", DataType.F32, 4, f, null), b.buffer("r", DataType.F32, 7, f, null), op,
            c.hasRoot() ? 0 : -1);
        assertEquals(c.counts().violation().tag(), direct, c.toString());
        assertEquals(direct, tagOf(PlanBuildException.class, b::build), c.toString());
      }
      assertEquals(RuleId.TYPE_MISMATCH.tag(), tagOf(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, four, ints, ReduceOp.SUM, -1, comm.stream())));
      PlanBuilder types = plan();
      types.allReduce(0, types.buffer("x", DataType.F32, 4, f, null), types.buffer("y", DataType.I32, 4, f, null),
          ReduceOp.SUM);
      assertEquals(RuleId.TYPE_MISMATCH.tag(), tagOf(PlanBuildException.class, types::build));

      assertEquals(RuleId.BAD_ROOT.tag(), tagOf(IllegalArgumentException.class,
          () -> CallRules.checkCollective(Collective.BROADCAST, comm, four, four, null, -1, comm.stream())));
      PlanBuilder root = plan();
      int p = root.buffer("p", DataType.F32, 4, f, null);
      root.broadcast(0, p, p, 2);
      assertEquals(RuleId.BAD_ROOT.tag(), tagOf(PlanBuildException.class, root::build));

      Buffer head = Buffer.view(DataType.F32, seven.memory(), 0, 4);
      Buffer tail = Buffer.view(DataType.F32, seven.memory(), 8, 4);
      assertEquals(RuleId.OVERLAP.tag(), tagOf(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, head, tail, ReduceOp.SUM, -1, comm.stream())));
      PlanBuilder overlap = plan();
      overlap.allReduce(0, overlap.buffer("x", DataType.F32, 4, f, head), overlap.buffer("y", DataType.F32, 4, f, tail),
          ReduceOp.SUM);
      assertEquals(RuleId.OVERLAP.tag(), tagOf(PlanBuildException.class, overlap::build));

      F32Buffer closed = F32Buffer.allocate(comm, 4);
      closed.close();
      assertEquals(RuleId.BAD_BUFFER.tag(), tagOf(BufferBindingException.class,
          () -> CallRules.checkCollective(Collective.ALL_REDUCE, comm, closed, four, ReduceOp.SUM, -1, comm.stream())));
      assertEquals(RuleId.BAD_BUFFER.tag(),
          tagOf(BufferBindingException.class, () -> plan().buffer("x", DataType.F32, 4, f, closed)));
      assertEquals(RuleId.BAD_BUFFER.tag(),
          tagOf(BufferBindingException.class, () -> plan().buffer("x", DataType.F32, 5, f, four)));
    }
  }

  @Test
  void planOnlyRulesHaveTheirIdsToo() {
    String f = "{\"n\"}";
    PlanBuilder divisible = plan();
    int all = divisible.buffer("all", DataType.F32, 5, f, null);
    divisible.allGather(0, all, all);
    assertEquals(RuleId.NOT_DIVISIBLE.tag(), tagOf(PlanBuildException.class, divisible::build));
    PlanBuilder race = plan();
    int x = race.buffer("x", DataType.F32, 4, f, null);
    race.allReduce(0, x, x, ReduceOp.SUM);
    race.broadcast(0, x, x, 0);
    assertEquals(RuleId.STEP_RACE.tag(), tagOf(PlanBuildException.class, race::build));
  }

  @Test
  void aScheduleIsCheckedBeforeItIsCompiled() {
    try (DeviceMemory memory = DeviceMemory.allocate(comm, 64)) {
      Schedule badRoot = new Schedule("p.S", 2, List.of(new Step(0, List.of(new CollectiveCall(Collective.BROADCAST,
          DataType.F32, null, 2, memory, 0, memory, 0, 4, List.of("x"), true)))));
      assertMessage(IllegalArgumentException.class, () -> CompiledSchedule.compile(comm, badRoot),
          RuleId.BAD_ROOT.tag(), "root 2", "[0, 2)");
      Schedule tooLong = new Schedule("p.S", 2, List.of(new Step(0, List.of(new CollectiveCall(Collective.ALL_REDUCE,
          DataType.F32, ReduceOp.SUM, -1, memory, 0, memory, 0, 32, List.of("x"), true)))));
      assertMessage(IllegalArgumentException.class, () -> CompiledSchedule.compile(comm, tooLong),
          RuleId.BAD_BUFFER.tag(), "plan p.S, step 0, all-reduce of [x]", "do not fit in a block of 64");
      Schedule noOp = new Schedule("p.S", 2, List.of(new Step(0, List.of(new CollectiveCall(Collective.REDUCE_SCATTER,
          DataType.F32, null, -1, memory, 0, memory, 0, 4, List.of("x"), true)))));
      assertMessage(IllegalArgumentException.class, () -> CompiledSchedule.compile(comm, noOp), "op must be set");
      Schedule elsewhere = new Schedule("p.S", 4, List.of());
      assertMessage(IllegalArgumentException.class, () -> CompiledSchedule.compile(comm, elsewhere),
          "built for 4 ranks");
    }
  }

  // ---- Cost -----------------------------------------------------------------------------------------

  @Test
  void aDirectCheckThatPassesAllocatesNothing() {
    var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().threadId();
    try (F32Buffer three = F32Buffer.allocate(comm, 3); F32Buffer six = F32Buffer.allocate(comm, 6)) {
      Buffer secondHalf = Buffer.view(DataType.F32, six.memory(), 12, 3); // in place on rank 1
      var stream = comm.stream();
      long counts = 0;
      for (int round = 0; round < 2; round++) { // the first round warms up; the second is measured
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < 20_000; i++) {
          counts += CallRules.checkCollective(Collective.ALL_REDUCE, comm, three, three, ReduceOp.SUM, -1, stream);
          counts += CallRules.checkCollective(Collective.BROADCAST, comm, six, six, null, 1, stream);
          counts += CallRules.checkCollective(Collective.ALL_GATHER, comm, secondHalf, six, null, -1, stream);
          counts += CallRules.checkCollective(Collective.REDUCE_SCATTER, comm, six, three, ReduceOp.MAX, -1, stream);
        }
        long allocated = threads.getThreadAllocatedBytes(id) - before;
        if (round == 1) {
          assertTrue(allocated < 1024, allocated + " bytes allocated by 80000 checks");
        }
      }
      assertEquals(2 * 20_000L * (3 + 6 + 3 + 3), counts);
    }
  }
}
