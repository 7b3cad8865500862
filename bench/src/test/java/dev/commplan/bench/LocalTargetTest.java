package dev.commplan.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.DataType;
import dev.commplan.timing.SteadyState;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A short local-target run: every case is measured, checked right, and printed with its warm-up. */
class LocalTargetTest {
  @Test
  void everyCaseOnTwoAndThreeRanksIsMeasuredAndRight() {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    List<LocalTarget.Part> parts = LocalTarget.run(
        new LocalTarget.Config(96 * 1024, List.of(2, 3), LocalTarget.COLLS, DataType.F32, 2, 3,
            SteadyState.Rule.steady(2, 0.05, 0, 0.2)),
        new PrintStream(text, true, StandardCharsets.UTF_8), null);
    String printed = text.toString(StandardCharsets.UTF_8);
    assertEquals(2, parts.size());
    for (LocalTarget.Part part : parts) {
      assertTrue(part.memcpySeconds() > 0, part.toString());
      assertWarmedUp(part.memcpyWarmup());
      assertEquals(2 * LocalTarget.COLLS.size(), part.lines().size(), "in and out of place of each collective");
      for (LocalTarget.Line line : part.lines()) {
        assertEquals(0, line.wrong(), line.toString());
        assertTrue(line.seconds() > 0 && line.ratio() > 0 && line.cpuSeconds() > 0, line.toString());
        assertEquals(line.ratio() * line.coll().busFactor(part.ranks()), line.busRatio(), 1e-12);
        assertWarmedUp(line.warmup());
      }
    }
    assertTrue(printed.contains("# 3 ranks: memcpy 96 KiB: warm-up "), printed);
    assertTrue(printed.contains("algbw/memcpy"), printed);
  }

  /** Stable means two windows of two calls agreed; otherwise the 0.2 s cap ended it. */
  private static void assertWarmedUp(SteadyState.WarmUp w) {
    assertTrue(w.ending() == SteadyState.Ending.STABLE ? w.calls() >= 4 : w.millis() >= 200 && w.calls() >= 1,
        w.toString());
  }
}
