package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.local.LocalCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Issue 20, cases 3 and 4: sizes beyond a long, memory the device does not have, and inputs that built
 * before without a word. Each is now refused with the exception type the issue asks for, naming the
 * field, its shape, the element count and the byte size.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NonsenseInputTest {
  private LocalCluster cluster;
  private Communicator comm;

  @BeforeAll
  void start() {
    cluster = new LocalCluster(1);
    comm = cluster.call(c -> c).getFirst();
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  private static void assertMentions(String text, String... parts) {
    for (String part : parts) {
      assertTrue(text.contains(part), () -> "'" + part + "' missing from: " + text);
    }
  }

  @Test
  void aByteSizeBeyondALongIsAPlanBuildExceptionNamingTheField() {
    PlanBuilder b = new PlanBuilder("t.Zero", comm, 0).fingerprintCheck(false);
    PlanBuildException e = assertThrows(PlanBuildException.class,
        () -> b.buffer("shard", DataType.F32, 1L << 62, "{\"shard\"}", null));
    assertMentions(e.getMessage(), "field 'shard'", "{\"shard\"}", "4611686018427387904 elements of F32",
        "18446744073709551616 bytes", "more than a long");
    PlanBuilder b2 = new PlanBuilder("t.Max", comm, 0).fingerprintCheck(false);
    assertThrows(PlanBuildException.class, () -> b2.buffer("x", DataType.F32, Long.MAX_VALUE, "{\"n\"}", null));
  }

  @Test
  void directAllocationBeyondALongOrOfNothingIsAnIllegalArgument() {
    IllegalArgumentException big = assertThrows(IllegalArgumentException.class,
        () -> F32Buffer.allocate(comm, Long.MAX_VALUE));
    assertMentions(big.getMessage(), "9223372036854775807 elements", "36893488147419103228 bytes");
    IllegalArgumentException empty = assertThrows(IllegalArgumentException.class, () -> F32Buffer.allocate(comm, 0));
    assertMentions(empty.getMessage(), "0 elements", "at least one element");
  }

  /** 2^48 floats (1 PiB): more than any host has (or can address); the 2^40 is the same failure. */
  @Test
  void memoryTheDeviceDoesNotHaveSaysHowMuchWasAskedFor() {
    long elements = 1L << 48;
    IllegalArgumentException direct = assertThrows(IllegalArgumentException.class,
        () -> F32Buffer.allocate(comm, elements));
    assertMentions(direct.getMessage(), "cannot allocate " + elements * 4 + " bytes", "rank 0", "local backend");
    PlanBuilder b = new PlanBuilder("t.Huge", comm, 0).fingerprintCheck(false);
    int g = b.buffer("grads", DataType.F32, elements, "{\"n\"}", null);
    b.allReduce(0, g, g, ReduceOp.SUM);
    PlanBuildException plan = assertThrows(PlanBuildException.class, b::build);
    assertMentions(plan.getMessage(), "plan t.Huge", "could not be allocated", "'grads' @Shape({\"n\"}) = "
        + elements + " elements of F32, " + elements * 4 + " bytes");
  }

  @Test
  void aNegativeShapeFactorIsRefused() {
    PlanBuildException e = assertThrows(PlanBuildException.class, () -> PlanBuilder.count("g", "{a,b}", -3, 4));
    assertMentions(e.getMessage(), "field 'g'", "{a,b}", "-3", "> 0");
  }

  @Test
  void oneBufferBoundToTwoFieldsIsRefusedNamingBoth() {
    try (F32Buffer shared = F32Buffer.allocate(comm, 16)) {
      PlanBuilder b = new PlanBuilder("t.Twice", comm, 0).fingerprintCheck(false);
      b.buffer("grads", DataType.F32, 16, "{\"16\"}", shared);
      BufferBindingException e = assertThrows(BufferBindingException.class,
          () -> b.buffer("params", DataType.F32, 16, "{\"16\"}", shared));
      assertMentions(e.getMessage(), "field 'grads'", "field 'params'", "the same buffer");
    }
  }
}
