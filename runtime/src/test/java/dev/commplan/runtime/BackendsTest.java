package dev.commplan.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BackendsTest {
  @Test
  void localByNameAndDirectly() {
    try (Cluster byName = Backends.cluster("local", 3); Cluster direct = Backends.local(2)) {
      assertEquals(3, byName.size());
      assertEquals("local", byName.backendName());
      assertEquals(2, direct.size());
    }
  }

  @Test
  void optionsReachTheCluster() {
    CommOptions options = CommOptions.timeout(java.time.Duration.ofSeconds(7));
    try (Cluster byName = Backends.cluster("local", 2, options); Cluster direct = Backends.local(3, options)) {
      assertEquals(java.time.Duration.ofSeconds(7), ((dev.commplan.runtime.local.LocalCluster) byName).timeout());
      assertEquals(java.time.Duration.ofSeconds(7), ((dev.commplan.runtime.local.LocalCluster) direct).timeout());
    }
    assertThrows(NullPointerException.class, () -> Backends.cluster("local", 2, null));
  }

  @Test
  void anUnknownNameListsTheKnownOnes() {
    String message = assertThrows(IllegalArgumentException.class, () -> Backends.cluster("gloo", 2)).getMessage();
    assertTrue(message.contains("'gloo'") && message.contains("local") && message.contains("nccl"), message);
  }

  @Test
  void mpiIsOneRankPerProcessAndTheMessageSaysHow() {
    String message = assertThrows(IllegalArgumentException.class, () -> Backends.cluster("mpi", 3)).getMessage();
    assertTrue(message.contains("mpirun -np 3") && message.contains("MpiBackend.world()")
        && message.contains("Backends.processCommunicator(\"mpi\")"), message);
  }

  @Test
  void aClusterNeedsARank() {
    assertThrows(IllegalArgumentException.class, () -> Backends.cluster("local", 0));
    assertThrows(IllegalArgumentException.class, () -> Backends.local(-1));
  }

  @Test
  void processCommunicatorNamesWhatRunsOneRankPerProcess() {
    String local = assertThrows(IllegalArgumentException.class, () -> Backends.processCommunicator("local")).getMessage();
    assertTrue(local.contains("Backends.cluster(\"local\", n)"), local);
    String unknown = assertThrows(IllegalArgumentException.class, () -> Backends.processCommunicator("gloo")).getMessage();
    assertTrue(unknown.contains("'gloo'") && unknown.contains("[local, mpi, nccl") , unknown);
  }

  @Test
  void everyBuiltInBackendIsFoundByName() {
    assertTrue(Backends.names().containsAll(java.util.List.of("local", "mpi", "nccl")), Backends.names().toString());
    assertEquals("nccl", Backends.backend("NCCL").name());
    assertEquals(null, Backends.backend("local").unavailableReason());
  }

  /** A backend jar of someone else's, here the test class path's {@link TestEchoBackend}, shows up by name. */
  @Test
  void aThirdPartyBackendOnTheClassPathShowsUpByName() {
    assertTrue(Backends.names().contains("test-echo"), Backends.names().toString());
    try (Cluster cluster = Backends.cluster("test-echo", 3)) {
      assertEquals("test-echo", cluster.backendName());
      assertEquals(3, cluster.size());
    }
    String message = assertThrows(IllegalArgumentException.class, () -> Backends.processCommunicator("test-echo"))
        .getMessage();
    assertTrue(message.contains("test-echo has no process communicator"), message);
  }
}
