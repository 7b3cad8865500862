package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F16Buffer;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.U32Buffer;
import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.runtime.DeviceMemory;
import java.lang.reflect.Proxy;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Binding a user buffer of the wrong size, type, communicator, cluster or backend: each refusal is a
 * {@link BufferBindingException} naming the plan, the field, what it needs (type, count, shape) and what
 * was given. (PlanBuilderTest covers the first cases for F32/F64; these add same-width types, another
 * cluster's communicator of the same rank, and another backend.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PlanBindingTest {
  private LocalCluster cluster;
  private LocalCluster otherCluster;
  private Communicator comm; // rank 0 of 2
  private Communicator sameRankElsewhere; // rank 0 of another 2-rank cluster

  @BeforeAll
  void start() {
    cluster = new LocalCluster(2);
    otherCluster = new LocalCluster(2);
    comm = cluster.call(c -> c).get(0);
    sameRankElsewhere = otherCluster.call(c -> c).get(0);
  }

  @AfterAll
  void stop() {
    cluster.close();
    otherCluster.close();
  }

  private String refusal(DataType type, long count, Buffer bound) {
    PlanBuilder b = new PlanBuilder("t.Bind", comm, 0);
    return assertThrows(BufferBindingException.class, () -> b.buffer("grad", type, count, "{\"n\"}", bound))
        .getMessage();
  }

  private static void assertMentions(String message, String... parts) {
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }
  }

  @Test
  void theWrongCountNamesBothCounts() {
    try (F32Buffer shorter = F32Buffer.allocate(comm, 511)) {
      assertMentions(refusal(DataType.F32, 512, shorter), "plan t.Bind", "field 'grad'", "F32 buffer of 512 elements",
          "shape {\"n\"}", "has 511 elements");
    }
  }

  @Test
  void aTypeOfTheSameWidthIsStillTheWrongType() {
    try (F16Buffer half = F16Buffer.allocate(comm, 64);
        U32Buffer unsigned = U32Buffer.allocate(comm, 64);
        I32Buffer signed = I32Buffer.allocate(comm, 64)) {
      assertMentions(refusal(DataType.BF16, 64, half), "field 'grad'", "BF16 buffer of 64 elements",
          "F16 buffer of 64 elements", "F16Buffer");
      assertMentions(refusal(DataType.I32, 64, unsigned), "I32 buffer", "U32 buffer", "U32Buffer");
      assertMentions(refusal(DataType.U32, 64, signed), "U32 buffer", "I32 buffer", "I32Buffer");
    }
  }

  @Test
  void aBufferOfAnotherClustersCommunicatorOfTheSameRankIsRefused() {
    try (BF16Buffer foreign = BF16Buffer.allocate(sameRankElsewhere, 64)) {
      assertMentions(refusal(DataType.BF16, 64, foreign), "field 'grad'", "another local communicator of rank 0",
          "another cluster", "this plan's (local rank 0)", "allocate it on the communicator the plan is built for");
    }
  }

  @Test
  void aBufferOfAnotherBackendIsRefused() {
    Communicator fake = fakeCommunicator("fake", 0);
    DeviceMemory memory = fakeMemory(fake, 4096);
    Buffer foreign = Buffer.view(DataType.F32, memory, 0, 256);
    assertMentions(refusal(DataType.F32, 256, foreign), "field 'grad'", "the fake backend (rank 0)",
        "not to this plan's (local rank 0)");
  }

  private static Communicator fakeCommunicator(String backend, int rank) {
    return (Communicator) Proxy.newProxyInstance(Communicator.class.getClassLoader(), new Class<?>[] {Communicator.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "backendName" -> backend;
          case "rank" -> rank;
          case "size" -> 2;
          case "isClosed" -> false;
          case "toString" -> "FakeCommunicator[" + backend + " rank " + rank + "]";
          case "hashCode" -> System.identityHashCode(proxy);
          case "equals" -> proxy == args[0];
          default -> throw new UnsupportedOperationException(method.getName());
        });
  }

  private static DeviceMemory fakeMemory(Communicator owner, long bytes) {
    return (DeviceMemory) Proxy.newProxyInstance(DeviceMemory.class.getClassLoader(), new Class<?>[] {DeviceMemory.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "byteSize" -> bytes;
          case "owner" -> owner;
          case "isClosed" -> false;
          case "toString" -> "FakeMemory[" + bytes + " bytes]";
          case "hashCode" -> System.identityHashCode(proxy);
          case "equals" -> proxy == args[0];
          default -> throw new UnsupportedOperationException(method.getName());
        });
  }

  @Test
  void theFixturesAreWhatTheTestsAssume() {
    assertTrue(comm.rank() == 0 && sameRankElsewhere.rank() == 0 && comm != sameRankElsewhere);
    assertTrue(List.of(comm.size(), sameRankElsewhere.size()).equals(List.of(2, 2)));
  }
}
