package dev.commplan.runtime.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.launch.LaunchEnvironment.Overrides;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reading launcher variables: each launcher, precedence, overrides, inference and every error. */
class LaunchEnvironmentTest {
  private static Map<String, String> env(String... kv) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], kv[i + 1]);
    }
    return m;
  }

  private static void assertInfo(ProcessInfo p, int rank, int size, int local, String addr, int port, Launcher l) {
    assertEquals(new ProcessInfo(rank, size, local, addr, port, l), p);
  }

  private static String error(Map<String, String> env, Overrides o) {
    return assertThrows(IllegalArgumentException.class, () -> LaunchEnvironment.from(env, o)).getMessage();
  }

  private static void assertMentions(String message, String... parts) {
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }
  }

  @Test
  void torchrun() {
    assertInfo(LaunchEnvironment.from(env("RANK", "5", "WORLD_SIZE", "8", "LOCAL_RANK", "1", "LOCAL_WORLD_SIZE", "4",
        "MASTER_ADDR", "node0", "MASTER_PORT", "29400")), 5, 8, 1, "node0", 29400, Launcher.TORCHRUN);
  }

  @Test
  void thePortVariableWinsAndTorchrunsAgentStorePortIsSkipped() {
    Map<String, String> e = env("RANK", "0", "WORLD_SIZE", "2", "MASTER_ADDR", "h", "MASTER_PORT", "29500");
    assertEquals(29500, LaunchEnvironment.from(e).masterPort());
    e.put("TORCHELASTIC_USE_AGENT_STORE", "True");
    assertEquals(29501, LaunchEnvironment.from(e).masterPort());
    e.put("COMMPLAN_RENDEZVOUS_PORT", "40000");
    assertEquals(40000, LaunchEnvironment.from(e).masterPort());
    assertEquals(41000, LaunchEnvironment.from(e, Overrides.NONE.withMasterPort(41000)).masterPort());
  }

  @Test
  void openMpi() {
    assertInfo(LaunchEnvironment.from(env("OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4",
        "OMPI_COMM_WORLD_LOCAL_RANK", "2", "OMPI_COMM_WORLD_LOCAL_SIZE", "4")), 2, 4, 2, "127.0.0.1", 29500,
        Launcher.OPEN_MPI);
  }

  @Test
  void slurm() {
    assertInfo(LaunchEnvironment.from(env("SLURM_PROCID", "3", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1",
        "SLURM_NNODES", "4", "SLURM_STEP_NODELIST", "gpu[07-10]", "SLURM_NTASKS_PER_NODE", "2(x4)")), 3, 8, 1, "gpu07",
        29500, Launcher.SLURM);
    assertInfo(LaunchEnvironment.from(env("SLURM_PROCID", "1", "SLURM_NPROCS", "2", "SLURM_NNODES", "1")), 1, 2, 1,
        "127.0.0.1", 29500, Launcher.SLURM);
  }

  @Test
  void noLauncherIsOneRank() {
    assertInfo(LaunchEnvironment.from(env()), 0, 1, 0, "127.0.0.1", 29500, Launcher.NONE);
    assertInfo(LaunchEnvironment.from(env("MASTER_PORT", "4000")), 0, 1, 0, "127.0.0.1", 4000, Launcher.NONE);
  }

  @Test
  void torchrunWinsOverOpenMpiWhichWinsOverSlurm() {
    Map<String, String> all = env("RANK", "1", "WORLD_SIZE", "2", "LOCAL_RANK", "1", "OMPI_COMM_WORLD_RANK", "3",
        "OMPI_COMM_WORLD_SIZE", "4", "SLURM_PROCID", "0", "SLURM_NTASKS", "1", "MASTER_ADDR", "h");
    assertEquals(Launcher.TORCHRUN, LaunchEnvironment.from(all).launcher());
    all.remove("RANK");
    all.remove("WORLD_SIZE");
    all.remove("LOCAL_RANK");
    ProcessInfo mpi = LaunchEnvironment.from(all);
    assertEquals(Launcher.OPEN_MPI, mpi.launcher());
    assertEquals(3, mpi.rank());
    assertEquals(3, mpi.localRank(), "no local rank: the rank");
  }

  @Test
  void explicitValuesOverrideOneByOne() {
    Map<String, String> e = env("RANK", "1", "WORLD_SIZE", "4", "LOCAL_RANK", "1", "MASTER_ADDR", "a", "MASTER_PORT", "5");
    assertInfo(LaunchEnvironment.from(e, Overrides.NONE.withLocalRank(0).withMasterPort(7000)), 1, 4, 0, "a", 7000,
        Launcher.TORCHRUN);
    assertInfo(LaunchEnvironment.from(e, Overrides.NONE.withRank(3).withSize(8).withMasterAddr("b")), 3, 8, 1, "b", 5,
        Launcher.EXPLICIT);
    assertInfo(LaunchEnvironment.from(env(), Overrides.NONE.withRank(2).withSize(3).withMasterAddr("m")), 2, 3, 2, "m",
        29500, Launcher.EXPLICIT);
  }

  @Test
  void multiNodeWithoutMasterAddrLeavesItUnknown() {
    assertNull(LaunchEnvironment.from(env("RANK", "0", "WORLD_SIZE", "16", "LOCAL_WORLD_SIZE", "8")).masterAddr());
    assertNull(LaunchEnvironment.from(env("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "2")).masterAddr());
  }

  @Test
  void errorsNameTheVariables() {
    assertMentions(error(env("RANK", "4", "WORLD_SIZE", "4"), Overrides.NONE), "RANK=4", "WORLD_SIZE=4", "[0, 4)");
    assertMentions(error(env("RANK", "-1", "WORLD_SIZE", "4"), Overrides.NONE), "RANK=-1");
    assertMentions(error(env("RANK", "0", "WORLD_SIZE", "0"), Overrides.NONE), "WORLD_SIZE=0", "at least 1");
    assertMentions(error(env("RANK", "1"), Overrides.NONE), "RANK=1 is set but WORLD_SIZE is not");
    assertMentions(error(env("WORLD_SIZE", "2"), Overrides.NONE), "WORLD_SIZE=2 is set but RANK is not");
    assertMentions(error(env("SLURM_PROCID", "0"), Overrides.NONE), "SLURM_PROCID=0", "SLURM_NTASKS / SLURM_NPROCS");
    assertMentions(error(env("RANK", "x", "WORLD_SIZE", "2"), Overrides.NONE), "RANK=x is not an integer");
    assertMentions(error(env("RANK", "1", "WORLD_SIZE", "2", "LOCAL_RANK", "2"), Overrides.NONE), "LOCAL_RANK=2",
        "[0, 2)");
    assertMentions(error(env("RANK", "3", "WORLD_SIZE", "8", "LOCAL_RANK", "4", "LOCAL_WORLD_SIZE", "4"), Overrides.NONE),
        "LOCAL_RANK=4 is not below LOCAL_WORLD_SIZE=4");
    assertMentions(error(env("RANK", "0", "WORLD_SIZE", "2", "MASTER_PORT", "70000"), Overrides.NONE),
        "MASTER_PORT=70000", "[1, 65535]");
    assertMentions(error(env("RANK", "1", "WORLD_SIZE", "4"), Overrides.NONE.withSize(1)), "RANK=1",
        "explicit size 1");
    assertMentions(error(env(), Overrides.NONE.withRank(1)), "explicit rank 1", "no launcher: size 1");
  }

  @Test
  void slurmNodeListsGiveTheirFirstHost() {
    assertEquals("gpu03", LaunchEnvironment.firstHost("gpu[03-05,09],cpu1"));
    assertEquals("a1", LaunchEnvironment.firstHost("a1,a2"));
    assertEquals("n7", LaunchEnvironment.firstHost("n[7,9-12]"));
    assertEquals("solo", LaunchEnvironment.firstHost("solo"));
  }

  @Test
  void theDeviceIsTheLocalRankModuloTheDevices() {
    ProcessInfo p = new ProcessInfo(5, 8, 5, "h", 1, Launcher.TORCHRUN);
    assertEquals(1, p.device(4));
    assertEquals(0, p.device(1));
    assertThrows(IllegalArgumentException.class, () -> p.device(0));
  }
}
