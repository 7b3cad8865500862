package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SeedSampleTest {

  private record Run(int status, String out, String err) {}

  private static Run main(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void seedExplainsItselfOnFourRanks() {
    Run run = main("seed");
    assertEquals(0, run.status(), run.err());
    String expected =
        """
        seed: the Seed plan on 4 ranks, local backend: four collectives in step 0, issued as one NCCL group
        all-reduce SUM of 'total' (in place): rank r contributes r + 1: [1.0, 2.0, 3.0, 4.0]
          expected on every rank: [10.0], the sum of the contributions
          all-reduce rank 0: [10.0]  ok
          all-reduce rank 1: [10.0]  ok
          all-reduce rank 2: [10.0]  ok
          all-reduce rank 3: [10.0]  ok
        all-gather of 'mine' into 'gathered': rank r contributes 10 * (r + 1): [10.0, 20.0, 30.0, 40.0]
          expected on every rank: [10.0, 20.0, 30.0, 40.0], the contributions in rank order
          all-gather rank 0: [10.0, 20.0, 30.0, 40.0]  ok
          all-gather rank 1: [10.0, 20.0, 30.0, 40.0]  ok
          all-gather rank 2: [10.0, 20.0, 30.0, 40.0]  ok
          all-gather rank 3: [10.0, 20.0, 30.0, 40.0]  ok
        reduce-scatter SUM of 'contributions' into 'slice': every rank contributes [1.0, 2.0, 3.0, 4.0]
          expected on rank r: the sum over 4 ranks of element r, 4 * (r + 1)
          reduce-scatter rank 0: [4.0]  ok
          reduce-scatter rank 1: [8.0]  ok
          reduce-scatter rank 2: [12.0]  ok
          reduce-scatter rank 3: [16.0]  ok
        broadcast from rank 0 of 'params' (in place): rank 0 has [3.0, 1.0, 4.0, 1.0, 5.0], the others [-1.0, -1.0, -1.0, -1.0, -1.0]
          expected on every rank: [3.0, 1.0, 4.0, 1.0, 5.0], rank 0's
          broadcast rank 0: [3.0, 1.0, 4.0, 1.0, 5.0]  ok
          broadcast rank 1: [3.0, 1.0, 4.0, 1.0, 5.0]  ok
          broadcast rank 2: [3.0, 1.0, 4.0, 1.0, 5.0]  ok
          broadcast rank 3: [3.0, 1.0, 4.0, 1.0, 5.0]  ok
        check: 16 of 16 results as expected (4 collectives x 4 ranks), max |diff| 0.0e+00
        """;
    assertEquals(expected, run.out().replace(System.lineSeparator(), "\n"));
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 8, 16})
  void seedFollowsTheRankCount(int ranks) {
    Run run = main("seed", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.err());
    List<String> gathered = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      gathered.add(Float.toString(10f * (r + 1)));
    }
    float sum = ranks * (ranks + 1) / 2f;
    String gatheredText = ranks <= 12 ? gathered.toString()
        : "[10.0, 20.0, 30.0, 40.0, ..., " + 10f * ranks + "] (" + ranks + " values)";
    for (int r = 0; r < ranks; r++) {
      assertTrue(run.out().contains("  all-reduce rank " + r + ": [" + sum + "]  ok\n"), run.out());
      assertTrue(run.out().contains("  all-gather rank " + r + ": " + gatheredText + "  ok\n"), run.out());
      assertTrue(run.out().contains("  reduce-scatter rank " + r + ": [" + (float) ranks * (r + 1) + "]  ok\n"), run.out());
    }
    assertTrue(run.out().endsWith("check: " + 4 * ranks + " of " + 4 * ranks + " results as expected (4 collectives x "
        + LossTable.ranks(ranks) + "), max |diff| 0.0e+00\n"), run.out());
  }

  /** A wrong result is marked on its line, the check line says FAILED, and the report says so (exit 1). */
  @Test
  void aWrongResultFailsTheCheck() {
    float[] gathered = {10f, 20f};
    List<SeedSample.RankResult> results = List.of(
        new SeedSample.RankResult(new float[] {3f}, gathered, new float[] {2f}, SeedSample.ROOT_PARAMS.clone()),
        new SeedSample.RankResult(new float[] {3f}, new float[] {10f, 25f}, new float[] {4f}, SeedSample.ROOT_PARAMS.clone()));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    boolean ok = SeedSample.printAll(results, "local", new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertFalse(ok, out);
    assertTrue(out.contains("  all-gather rank 1: [10.0, 25.0]  WRONG, expected [10.0, 20.0]"), out);
    assertTrue(out.contains("  all-gather rank 0: [10.0, 20.0]  ok"), out);
    assertTrue(out.contains("check: FAILED, 1 of 8 results differ from the expected values, max |diff| 5.0e+00"), out);
  }

  @Test
  void everyMistakeIsOneLineWithStatusTwoBeforeAnyWork() {
    String[][] cases = {
      {"seed", "--ranks", "zero"}, {"seed", "--ranks", "0"}, {"seed", "--ranks", "100000"}, {"seed", "--bogus"},
      {"seed", "--backend", "gloo"}, {"nope"}, {}, {"seed", "ddp"}, {"seed", "--ranks"}, {"seed", "--ranks", "2", "--ranks", "3"},
      {"ddp", "--backend", "mpi"}, {"ddp", "--out", "/proc/x.svg"},
    };
    for (String[] args : cases) {
      long t0 = System.nanoTime();
      Run run = main(args);
      String what = String.join(" ", args) + " -> " + run.err();
      assertEquals(2, run.status(), what);
      assertEquals("", run.out(), what);
      assertTrue(run.err().startsWith("error: "), what);
      assertEquals(1, run.err().lines().count(), what);
      assertTrue((System.nanoTime() - t0) / 1e9 < 5, "not up front: " + what);
    }
    assertTrue(main("seed", "--ranks", "zero").err().contains("--ranks takes a whole number, not 'zero'"));
    assertTrue(main("seed", "--ranks", "100000").err().contains("at most " + Main.MAX_LOCAL_RANKS), "names the limit");
    assertTrue(main("ddp", "--backend", "mpi").err().contains("--backend mpi runs seed, pipeline, moe, tp, 3d, overlap only, not 'ddp'"));
    assertTrue(main("ddp", "--out", "/proc/x.svg").err().contains("cannot write its loss curve to /proc/x.svg"));
  }

  /** bin/gpu-run passes --out to every sample: the others say they write no file, and run. */
  @Test
  void outOnAnotherSampleIsANoteNotAnError() {
    Run run = main("seed", "--ranks", "2", "--out", "seed.svg");
    assertEquals(0, run.status(), run.err());
    assertEquals("note: --out is ddp's and overlap --measure's (where they draw); seed writes no file\n",
        run.err().replace(System.lineSeparator(), "\n"));
  }

  @Test
  void helpPrintsTheUsage() {
    Run run = main("--help");
    assertEquals(0, run.status());
    assertTrue(run.out().startsWith("usage:"), run.out());
  }
}
