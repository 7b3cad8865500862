package dev.commplan.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.doctor.Fixtures.Result;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The docs show what the doctor prints, not what someone typed: each block of docs/doctor.md marked
 * {@code <!-- doctor-output: NAME -->} is the command, its output on that fixture and its exit status; and
 * the excerpt in docs/flight-records.md is a valid record whose operations are the example file's.
 */
class DocsExampleTest {
  private static final Path DOCTOR_MD = Path.of("..", "docs", "doctor.md");
  private static final Path FORMAT_MD = Path.of("..", "docs", "flight-records.md");
  private static final Pattern BLOCK = Pattern.compile("<!-- doctor-output: (\\S+) -->\n```\n"
      + "\\$ java -jar doctor/target/commplan-doctor\\.jar ([^\n]*)\n(.*?)\\$ echo \\$\\?\n(\\d+)\n```", Pattern.DOTALL);
  /** The docs run from the checkout's root; this test runs in the module's folder. */
  private static final String FROM_ROOT = "doctor/src/test/resources/fixtures";
  private static final String FROM_MODULE = "src/test/resources/fixtures";

  @Test
  void everyOutputInTheHowToIsWhatTheDoctorPrints() throws Exception {
    Matcher m = BLOCK.matcher(Files.readString(DOCTOR_MD));
    int blocks = 0;
    while (m.find()) {
      String[] args = m.group(2).replace(FROM_ROOT, FROM_MODULE).split(" ");
      assertTrue(m.group(2).endsWith(FROM_ROOT + "/" + m.group(1)), "the block marked " + m.group(1) + " runs "
          + m.group(2));
      Result r = Fixtures.doctor(args);
      assertEquals(m.group(3), (r.out() + r.err()).replace(FROM_MODULE, FROM_ROOT), "docs/doctor.md, " + m.group(1));
      assertEquals(Integer.parseInt(m.group(4)), r.status(), "docs/doctor.md, " + m.group(1) + ": exit status");
      blocks++;
    }
    assertEquals(4, blocks, "blocks marked doctor-output in docs/doctor.md");
  }

  /**
   * The worked example is a real run's: the block marked {@code <!-- doctor-output-example: NAME -->} is what the
   * doctor prints on the files that run wrote ({@code docs/examples/NAME}), and the timeline image beside it is
   * the page's SVG, cut out unchanged.
   */
  @Test
  void theWorkedExampleIsWhatTheDoctorPrintsOnTheRunsFiles(@org.junit.jupiter.api.io.TempDir Path tmp)
      throws Exception {
    Pattern block = Pattern.compile("<!-- doctor-output-example: (\\S+) -->\n```\n"
        + "\\$ java -jar doctor/target/commplan-doctor\\.jar --html (\\S+) (\\S+)\n(.*?)\\$ echo \\$\\?\n(\\d+)\n```",
        Pattern.DOTALL);
    Matcher m = block.matcher(Files.readString(DOCTOR_MD));
    assertTrue(m.find(), "docs/doctor.md has the worked example's block");
    assertEquals("docs/examples/" + m.group(1), m.group(3));
    Path html = tmp.resolve("page.html");
    Result r = Fixtures.doctor("--html", html.toString(), Path.of("..").resolve(m.group(3)).toString());
    assertEquals(m.group(4), (r.out() + r.err()).replace(html.toString(), m.group(2)), "docs/doctor.md, worked example");
    assertEquals(Integer.parseInt(m.group(5)), r.status(), "docs/doctor.md, worked example: exit status");
    Matcher svg = Pattern.compile("<svg[^>]*class=\"timeline\".*?</svg>", Pattern.DOTALL).matcher(Files.readString(html));
    assertTrue(svg.find(), "the page has a timeline");
    String image = Files.readString(Path.of("..", "docs", "img", "doctor-example.svg"));
    assertEquals(svg.group(), image.substring(image.indexOf("<svg")).strip(), "docs/img/doctor-example.svg is the page's");
  }

  @Test
  void theFormatPagesExcerptIsAValidRecordCutFromTheExample() throws Exception {
    String page = Files.readString(FORMAT_MD);
    int start = page.indexOf("```json\n") + "```json\n".length();
    String excerpt = page.substring(start, page.indexOf("```", start));
    RecordParser.parse(Path.of("excerpt.json"), excerpt);
    List<Object> shown = operations(Json.parse(excerpt), 0);
    List<Object> full = operations(Json.parse(Files.readString(RecordParserTest.EXAMPLE)), 0);
    assertTrue(full.containsAll(shown), "every operation the page shows is the example file's");
    Map<?, ?> top = (Map<?, ?>) Json.parse(excerpt);
    Map<?, ?> exampleTop = (Map<?, ?>) Json.parse(Files.readString(RecordParserTest.EXAMPLE));
    for (Object member : top.keySet()) {
      if (!member.equals("groups")) {
        assertEquals(exampleTop.get(member), top.get(member), String.valueOf(member));
      }
    }
  }

  private static List<Object> operations(Object record, int group) {
    List<?> groups = (List<?>) ((Map<?, ?>) record).get("groups");
    @SuppressWarnings("unchecked")
    List<Object> ops = (List<Object>) ((Map<?, ?>) groups.get(group)).get("operations");
    return ops;
  }
}
