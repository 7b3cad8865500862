package dev.commplan.runtime.bootstrap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rendezvous across real processes: 2, 3 and 4 JVMs started with torchrun-style variables (RANK,
 * WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT) exchange rank 0's id and all-gather; a process killed
 * after joining makes the others fail at once naming it; a rank that never starts is named within the
 * join timeout.
 */
class MultiProcessRendezvousTest {
  private static final long HARD_LIMIT_S = 45;

  @TempDir
  Path dir;

  record Run(int rank, int exit, String out, double seconds) {}

  private List<Run> launch(int size, List<Integer> ranks, Map<String, String> extra) throws Exception {
    int port = Ports.free();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<Process> processes = new ArrayList<>();
    List<Path> outs = new ArrayList<>();
    long t0 = System.nanoTime();
    for (int rank : ranks) {
      ProcessBuilder pb = new ProcessBuilder(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", classpath,
          RendezvousProcessMain.class.getName());
      Map<String, String> env = pb.environment();
      env.keySet().removeIf(k -> k.startsWith("SLURM_") || k.startsWith("OMPI_") || k.startsWith("COMMPLAN_")
          || List.of("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT").contains(k));
      env.put("RANK", Integer.toString(rank));
      env.put("WORLD_SIZE", Integer.toString(size));
      env.put("LOCAL_RANK", Integer.toString(rank));
      env.put("LOCAL_WORLD_SIZE", Integer.toString(size));
      env.put("MASTER_ADDR", "127.0.0.1");
      env.put("MASTER_PORT", Integer.toString(port));
      env.putAll(extra);
      Path out = dir.resolve("rank" + rank + ".out");
      pb.redirectErrorStream(true).redirectOutput(out.toFile());
      processes.add(pb.start());
      outs.add(out);
    }
    List<Run> runs = new ArrayList<>();
    for (int i = 0; i < processes.size(); i++) {
      Process p = processes.get(i);
      long left = HARD_LIMIT_S * 1_000_000_000L - (System.nanoTime() - t0);
      if (!p.waitFor(Math.max(1, left), TimeUnit.NANOSECONDS)) {
        processes.forEach(Process::destroyForcibly);
        throw new AssertionError("rank " + ranks.get(i) + " still running after " + HARD_LIMIT_S + " s (a hang): "
            + Files.readString(outs.get(i)));
      }
      runs.add(new Run(ranks.get(i), p.exitValue(), Files.readString(outs.get(i), StandardCharsets.UTF_8),
          (System.nanoTime() - t0) / 1e9));
    }
    return runs;
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 3, 4})
  void everyProcessGetsRankZerosIdAndEveryContribution(int size) throws Exception {
    long seed = 1000 + size;
    Map<String, String> extra = size == 3 ? Map.of("TEST_SEED", Long.toString(seed), "COMMPLAN_RENDEZVOUS_SECRET",
        "multi-process") : Map.of("TEST_SEED", Long.toString(seed));
    List<Run> runs = launch(size, IntStream.range(0, size).boxed().toList(), extra);
    HexFormat hex = HexFormat.of();
    String id = "ID " + hex.formatHex(RendezvousProcessMain.id(seed));
    String all = "ALL " + IntStream.range(0, size).mapToObj(r -> hex.formatHex(RendezvousProcessMain.contribution(seed, r)))
        .collect(Collectors.joining(","));
    for (Run run : runs) {
      assertEquals(0, run.exit(), "rank " + run.rank() + ": " + run.out());
      assertTrue(run.out().contains(id), "rank " + run.rank() + " got another id: " + run.out());
      assertTrue(run.out().contains(all), "rank " + run.rank() + " gathered other data: " + run.out());
      assertTrue(run.out().contains("JOINED rank " + run.rank() + " of " + size + " (local rank " + run.rank()
          + ", from TORCHRUN"), run.out());
    }
  }

  @Test
  void aProcessKilledMidExchangeFailsTheOthersNamingIt() throws Exception {
    List<Run> runs = launch(3, List.of(0, 1, 2), Map.of("TEST_DIE_RANK", "2", "TEST_OP_MS", "20000"));
    assertEquals(3, runs.get(2).exit(), runs.get(2).out());
    for (Run run : runs.subList(0, 2)) {
      assertEquals(2, run.exit(), "rank " + run.rank() + ": " + run.out());
      assertTrue(run.out().contains("rank 2 closed its connection (did its process exit?"), run.out());
      assertTrue(run.seconds() < 20, "rank " + run.rank() + " failed after " + run.seconds() + " s, not at once");
    }
  }

  @Test
  void rankZeroKilledMidExchangeFailsTheOthersNamingIt() throws Exception {
    List<Run> runs = launch(3, List.of(0, 1, 2), Map.of("TEST_DIE_RANK", "0", "TEST_OP_MS", "20000"));
    for (Run run : runs.subList(1, 3)) {
      assertEquals(2, run.exit(), "rank " + run.rank() + ": " + run.out());
      assertTrue(run.out().contains("rank 0 (127.0.0.1:") && run.out().contains("closed the connection"), run.out());
      assertTrue(run.seconds() < 20, "rank " + run.rank() + " failed after " + run.seconds() + " s, not at once");
    }
  }

  @Test
  void aRankThatNeverStartsIsNamedWithinTheJoinTimeout() throws Exception {
    List<Run> runs = launch(3, List.of(0, 1), Map.of("TEST_JOIN_MS", "3000"));
    assertTrue(runs.get(0).out().contains("FAIL rank 2 never joined the rendezvous at 127.0.0.1:"), runs.get(0).out());
    assertTrue(runs.get(1).out().contains("reports: rank 2 never joined"), runs.get(1).out());
    for (Run run : runs) {
      assertEquals(2, run.exit(), run.out());
      assertTrue(run.seconds() < 3 + 12, "rank " + run.rank() + " took " + run.seconds() + " s");
    }
  }
}
