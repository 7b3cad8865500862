package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The picture of the 3d sample's plan on its mesh: what it draws, and that docs/img/mesh-3d.svg is up to date. */
class MeshPictureTest {
  private static List<MeshPicture.RankView> views;
  private static String svg;

  @BeforeAll
  static void draw() {
    views = MeshPicture.views();
    svg = MeshPicture.svg(views);
  }

  private static long count(String regex) {
    Matcher m = Pattern.compile(regex).matcher(svg);
    long n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  @Test
  void everyRanksScheduleNamesTheAxisOfEachCallAndItsGroup() {
    assertEquals(8, views.size());
    for (MeshPicture.RankView view : views) {
      for (MeshPicture.Call call : view.calls()) {
        String axis = call.axis();
        assertTrue(List.of("pp", "dp", "tp").contains(axis), call.toString());
        assertEquals(2, call.members().size(), call.toString());
        assertTrue(call.members().contains(view.rank()), call.toString());
        // The group along an axis: the ranks that differ from this one only in that coordinate.
        int stride = switch (axis) {
          case "pp" -> 4;
          case "dp" -> 2;
          default -> 1;
        };
        int other = call.members().get(0) == view.rank() ? call.members().get(1) : call.members().get(0);
        assertEquals(stride, Math.abs(other - view.rank()), call.toString());
      }
    }
  }

  @Test
  void itDrawsEachGroupInItsAxissColourAndEverySendAsAnArrow() {
    assertEquals(8, count("<text [^>]*font-weight=\"bold\">rank \\d</text>"), svg);
    assertEquals(4, count("<line [^>]*stroke=\"#d95f02\" stroke-width=\"4\"/>"), "tp groups: " + svg);
    assertEquals(4, count("<line [^>]*stroke=\"#1b9e77\" stroke-width=\"4\"/>"), "dp groups: " + svg);
    // Forward (step 1, solid) and back (step 3, dashed), between the two stages of each (dp, tp).
    assertEquals(4, count("<line [^>]*stroke=\"#7570b3\" stroke-width=\"1.8\" marker-end=\"url\\(#arrow-pp\\)\"/>"), svg);
    assertEquals(4, count("<line [^>]*stroke=\"#7570b3\" stroke-width=\"1.8\" stroke-dasharray=\"6 4\""
        + " marker-end=\"url\\(#arrow-pp\\)\"/>"), svg);
    assertEquals(4, count(">tp steps 0, 2</text>"), svg);
    assertEquals(4, count(">dp step 4</text>"), svg);
    assertEquals(4, count(">pp step 1</text>"), svg);
    assertEquals(4, count(">pp step 3</text>"), svg);
    assertTrue(svg.contains(">tp: all-reduce SUM, steps 0, 2; groups [0, 1] [2, 3] [4, 5] [6, 7]</text>"), svg);
    assertTrue(svg.contains(">dp: all-reduce AVG, step 4; groups [0, 2] [1, 3] [4, 6] [5, 7]</text>"), svg);
    assertTrue(svg.contains(">pp: send, recv, steps 1, 3; groups [0, 4] [1, 5] [2, 6] [3, 7]</text>"), svg);
    // describe()'s lines, each call in its axis's colour.
    assertTrue(count("fill=\"#d95f02\" xml:space=\"preserve\">    all-reduce over tp ") == 2, svg);
    assertTrue(count("fill=\"#1b9e77\" xml:space=\"preserve\">    all-reduce over dp ") == 1, svg);
    assertTrue(count("fill=\"#7570b3\" xml:space=\"preserve\">    (send|recv) over pp ") == 4, svg);
  }

  @Test
  void describeLinesAreWrappedAtACommaAndIndented() {
    assertEquals(List.of("  a: b, c,", "      d"), MeshPicture.wrap("  a: b, c, d", 11));
    assertEquals(List.of("short"), MeshPicture.wrap("short", 11));
  }

  /** docs/img/mesh-3d.svg is what the tool draws now; regenerate it with the command in docs/samples/meshes.md. */
  @Test
  void theCommittedPictureIsUpToDate() throws Exception {
    Path committed = Path.of("../docs/img/mesh-3d.svg");
    assertTrue(Files.exists(committed), "no " + committed.toAbsolutePath());
    assertEquals(Files.readString(committed, StandardCharsets.UTF_8), svg,
        "docs/img/mesh-3d.svg is out of date: java -cp samples/target/commplan-samples.jar"
            + " dev.commplan.samples.MeshPicture docs/img/mesh-3d.svg");
  }
}
