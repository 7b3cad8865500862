package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
  void seedPrintsTheTextbookResultsOnFourRanks() {
    Run run = main("seed");
    assertEquals(0, run.status(), run.err());
    String expected =
        """
        all-reduce rank 0: [10.0]
        all-reduce rank 1: [10.0]
        all-reduce rank 2: [10.0]
        all-reduce rank 3: [10.0]
        all-gather rank 0: [10.0, 20.0, 30.0, 40.0]
        all-gather rank 1: [10.0, 20.0, 30.0, 40.0]
        all-gather rank 2: [10.0, 20.0, 30.0, 40.0]
        all-gather rank 3: [10.0, 20.0, 30.0, 40.0]
        reduce-scatter rank 0: [4.0]
        reduce-scatter rank 1: [8.0]
        reduce-scatter rank 2: [12.0]
        reduce-scatter rank 3: [16.0]
        broadcast rank 0: [3.0, 1.0, 4.0, 1.0, 5.0]
        broadcast rank 1: [3.0, 1.0, 4.0, 1.0, 5.0]
        broadcast rank 2: [3.0, 1.0, 4.0, 1.0, 5.0]
        broadcast rank 3: [3.0, 1.0, 4.0, 1.0, 5.0]
        """;
    assertEquals(expected, run.out().replace(System.lineSeparator(), "\n"));
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 8})
  void seedFollowsTheRankCount(int ranks) {
    Run run = main("seed", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.err());
    List<String> gathered = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      gathered.add(Float.toString(10f * (r + 1)));
    }
    float sum = ranks * (ranks + 1) / 2f;
    for (int r = 0; r < ranks; r++) {
      assertTrue(run.out().contains("all-reduce rank " + r + ": [" + sum + "]"), run.out());
      assertTrue(run.out().contains("all-gather rank " + r + ": " + gathered), run.out());
      assertTrue(run.out().contains("reduce-scatter rank " + r + ": [" + (float) ranks * (r + 1) + "]"), run.out());
    }
  }

  @Test
  void badOptionsPrintUsage() {
    Run run = main("seed", "--ranks", "zero");
    assertEquals(2, run.status());
    assertTrue(run.err().contains("--ranks takes a whole number, not 'zero'"), run.err());
    assertTrue(run.err().contains("usage:"), run.err());
    assertEquals(2, main("nope").status());
    assertEquals(2, main("seed", "--backend", "gloo").status());
    Run ddpOnMpi = main("ddp", "--backend", "mpi");
    assertEquals(2, ddpOnMpi.status());
    assertTrue(ddpOnMpi.err().contains("--backend mpi runs the seed sample only, not 'ddp'"), ddpOnMpi.err());
  }
}
