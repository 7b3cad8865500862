package dev.commplan.runtime.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.nccl.NcclBackend;
import dev.commplan.runtime.nccl.GpuRanks;
import dev.commplan.runtime.nccl.NcclGpuTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * On a GPU machine: one process per rank, each bootstrapping NCCL from torchrun-style variables through
 * the TCP rendezvous ({@link NcclEnvAllReduceMain}), all-reducing and running a plan; at each world size of
 * {@link GpuRanks} (one process per GPU by default; several on one GPU with NCCL 2.30 and the opt-in,
 * passed on to the processes with every {@code commplan.*} property). Skipped where NCCL or a GPU is missing,
 * and a size this machine cannot run is skipped saying why.
 */
@NcclGpuTest
class ProcessBootstrapGpuTest {
  @TempDir
  Path dir;

  static java.util.stream.Stream<Integer> ranks() {
    return GpuRanks.requested().stream();
  }

  @ParameterizedTest(name = "{0} processes")
  @MethodSource("ranks")
  void oneProcessPerRankBootstrapsNcclFromTheEnvironment(int size) throws Exception {
    GpuRanks.assumeRunnable(size);
    org.junit.jupiter.api.Assumptions.assumeFalse(size > 1 && dev.commplan.runtime.nccl.GpuModel.loaded(),
        "one process per rank needs NCCL between processes; the CPU model (gpu-model/) runs the ranks of one process only");
    int devices = NcclBackend.deviceCount();
    int port = Ports.free();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    List<String> command = new ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED"));
    System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("commplan."))
        .forEach(k -> command.add("-D" + k + "=" + System.getProperty(k))); // library locations
    command.addAll(List.of("-cp", System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")),
        NcclEnvAllReduceMain.class.getName()));
    List<Process> ps = new ArrayList<>();
    List<Path> outs = new ArrayList<>();
    for (int r = 0; r < size; r++) {
      ProcessBuilder pb = new ProcessBuilder(command);
      Map<String, String> env = pb.environment();
      env.put("RANK", Integer.toString(r));
      env.put("WORLD_SIZE", Integer.toString(size));
      env.put("LOCAL_RANK", Integer.toString(r));
      env.put("LOCAL_WORLD_SIZE", Integer.toString(size));
      env.put("MASTER_ADDR", "127.0.0.1");
      env.put("MASTER_PORT", Integer.toString(port));
      env.put("COMMPLAN_RENDEZVOUS_SECRET", "gpu-test");
      Path out = dir.resolve("rank" + r + ".out");
      ps.add(pb.redirectErrorStream(true).redirectOutput(out.toFile()).start());
      outs.add(out);
    }
    for (int r = 0; r < size; r++) {
      boolean done = ps.get(r).waitFor(150, TimeUnit.SECONDS);
      String out = Files.readString(outs.get(r));
      System.out.println("rank " + r + ": " + out.strip());
      if (!done) {
        ps.forEach(Process::destroyForcibly);
      }
      assertTrue(done, "rank " + r + " did not finish in 150 s: " + out);
      assertEquals(0, ps.get(r).exitValue(), out);
      assertTrue(out.contains("OK rank " + r + " of " + size + " on device " + r % devices), out);
      if (size > devices) {
        assertTrue(out.contains("ranks share each GPU"), "the communicator says that ranks share its GPU: " + out);
      }
    }
  }
}
