package dev.commplan.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.doctor.Fixtures.Result;
import dev.commplan.doctor.Lateness.RankLateness;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The command end to end on the fixtures: exit status, what it prints, and on which stream. */
class DoctorCliTest {
  @Test
  void aHealthyRunExitsZeroAndSaysSo() {
    Result r = Fixtures.doctor(Fixtures.dir("fine").toString());
    assertEquals(0, r.status(), r.all());
    assertEquals("", r.err(), r.all());
    assertTrue(r.out().startsWith("CommPlan doctor: job \"fixture-fine\", local backend, 4 ranks\n"), r.all());
    assertTrue(r.out().endsWith("\nverdict: nothing wrong found\n"), r.all());
    // every group of the 2x2 mesh, the world first, then each axis's groups by their first member
    List<String> headers = r.out().lines().filter(l -> l.contains(": world rank")).toList();
    assertEquals(List.of("world: world ranks 0, 1, 2, 3; operations #0 to #9",
        "axis tp of mesh [dp=2, tp=2]: world ranks 0, 1; operations #0 to #2",
        "axis tp of mesh [dp=2, tp=2]: world ranks 2, 3; operations #0 to #2",
        "axis dp of mesh [dp=2, tp=2]: world ranks 0, 2; operations #0 to #1",
        "axis dp of mesh [dp=2, tp=2]: world ranks 1, 3; operations #0 to #1"), headers);
    assertTrue(r.out().contains("  last completed by every rank: #9 agreement check: all-gather U64, count 8\n"), r.all());
  }

  @Test
  void aRankThatNeverCalledStep3IsNamedWithWhereTheOthersWait() {
    Result r = Fixtures.doctor(Fixtures.dir("stuck").toString());
    assertEquals(1, r.status(), r.all());
    assertEquals("", r.err(), r.all());
    String world = section(r.out(), "world:");
    assertTrue(world.contains("""
          last completed by every rank: #8 plan train.Step, step 2, broadcast I32 root 0, count 4, fields [config]
          first difference: none
          never entered by rank 3: #9 plan train.Step, step 3, reduce-scatter F32 SUM, count 256, fields [shard, shardSum]
            ranks 0, 1, 2: failed in it after 1.00 s
            rank 3's last operation here: #8 plan train.Step, step 2, broadcast I32 root 0, count 4, fields [config] (completed)
            rank 3 had nothing unfinished: it was outside CommPlan's calls (in its own code)
        """), world);
    assertTrue(r.out().endsWith("""
        verdict: 1 problem
          world: rank 3 never entered #9 (plan train.Step, step 3, reduce-scatter F32 SUM, count 256, fields [shard, \
        shardSum]), which ranks 0, 1, 2 entered
        """), r.all());
  }

  @Test
  void aRank50msLateAtEveryCollectiveIsNamedSlowestByAClearMargin() throws BadInputException {
    Result r = Fixtures.doctor(Fixtures.dir("late").toString());
    assertEquals(1, r.status(), r.all());
    String world = section(r.out(), "world:");
    List<String> table = world.lines().filter(l -> l.startsWith("    rank ")).toList();
    assertEquals(4, table.size(), world);
    assertTrue(table.get(0).startsWith("    rank 2     median    50.1 ms   worst    50.4 ms   LATE"), world);
    assertTrue(world.contains("  slowest: rank 2, by 50.1 ms (median) over the next, rank 0\n"), world);
    assertTrue(r.out().endsWith("verdict: 1 problem\n  world: rank 2 is late: the others waited 50.1 ms for it (median"
        + " of 12 collectives; worst 50.4 ms)\n"), r.all());

    List<RankLateness> lateness = Fixtures.diagnosis("late").groups().get(0).lateness;
    assertEquals(2, lateness.get(0).worldRank());
    assertEquals(12, lateness.get(0).collectives(), "the agreement check's six calls are not counted");
    assertTrue(lateness.get(0).medianNanos() > 45_000_000, "rank 2's median " + lateness.get(0).medianNanos());
    for (RankLateness other : lateness.subList(1, 4)) {
      assertTrue(other.worstNanos() < 1_000_000, "rank " + other.worldRank() + ": " + other);
    }
  }

  @Test
  void theLateThresholdIsAnOption() {
    Result r = Fixtures.doctor("--late-ms", "100", Fixtures.dir("late").toString());
    assertEquals(0, r.status(), r.all());
    assertTrue(r.out().contains("    rank 2     median    50.1 ms   worst    50.4 ms\n"), r.all());
  }

  @Test
  void plansExecutedInDifferentOrdersShowEachRanksCall() {
    Result r = Fixtures.doctor(Fixtures.dir("orders").toString());
    assertEquals(1, r.status(), r.all());
    assertTrue(section(r.out(), "world:").contains("""
          last completed by every rank: #3 agreement check: all-gather U64, count 4
          first difference: #4, differing: plan, data type, op, count, fields
            ranks 0, 1: #4 plan model.Grads, step 0, all-reduce F32 AVG, count 4096, fields [w] (failed)
            ranks 2, 3: #4 plan model.Stats, step 0, all-reduce F64 SUM, count 2, fields [loss, norm] (failed)
        """), r.all());
    // what failed after the first difference follows from it: one problem, not three
    assertTrue(r.out().endsWith("verdict: 1 problem\n  world: the ranks' calls differ at #4 (plan, data type, op,"
        + " count, fields)\n"), r.all());
  }

  /** Every damaged input: exit 2, nothing on standard output, one line on standard error naming the file. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      truncated     | rank-1.json: not valid JSON: unexpected end of input at line 20, column 319 (the file ends early: truncated?)
      invalid       | rank-0.json: not valid JSON: a comma before ']' (JSON allows none after the last item) at line 23, column 3
      wrong-format  | rank-1.json: not a CommPlan flight record (its "format" is missing, not "commplan-flight-record")
      wrong-version | rank-1.json: flight-record format version 2; this doctor reads version 1 (use the doctor of the CommPlan release that wrote it)
      two-jobs      | rank-1.json: job "fixture-run-18", but {dir}/rank-0.json is job "fixture-run-17" (one folder must hold the files of one run)
      missing-rank  | : no file for rank 2 (job "fixture-damaged" has 4 ranks; files for ranks 0, 1, 3; a rank killed before it could write leaves none)
      """)
  void damagedInputIsOneLineNamingTheFile(String damaged, String expected) {
    Path dir = Fixtures.dir("damaged/" + damaged);
    String line = "commplan-doctor: " + dir + (expected.startsWith(":") ? "" : "/")
        + expected.replace("{dir}", dir.toString());
    assertOneLine(Fixtures.doctor(dir.toString()), line);
  }

  @Test
  void anEmptyFolderAFileAndAFolderThatDoesNotExist(@TempDir Path tmp) throws Exception {
    assertOneLine(Fixtures.doctor(tmp.toString()), "commplan-doctor: " + tmp + ": no flight records here (no .json file)");
    Files.writeString(tmp.resolve("notes.txt"), "not a record");
    Files.writeString(tmp.resolve("rank-0.json.tmp"), "{\"half\": "); // a writer's file not yet renamed
    assertOneLine(Fixtures.doctor(tmp.toString()), "commplan-doctor: " + tmp + ": no flight records here (no .json file)");
    Path missing = tmp.resolve("nothing-here");
    assertOneLine(Fixtures.doctor(missing.toString()), "commplan-doctor: " + missing + ": no such folder");
    Path file = tmp.resolve("notes.txt");
    assertOneLine(Fixtures.doctor(file.toString()),
        "commplan-doctor: " + file + ": not a folder (give the folder that holds the ranks' .json files)");
  }

  @Test
  void filesOfOneRunMustAgreeOnTheWorld(@TempDir Path tmp) throws Exception {
    Path fine = Fixtures.dir("fine");
    Files.copy(fine.resolve("rank-0.json"), tmp.resolve("a.json"));
    Files.copy(fine.resolve("rank-0.json"), tmp.resolve("b.json"));
    assertOneLine(Fixtures.doctor(tmp.toString()), "commplan-doctor: " + tmp.resolve("b.json") + ": rank 0 again ("
        + tmp.resolve("a.json") + " is rank 0 too)");
    Files.writeString(tmp.resolve("b.json"), Files.readString(fine.resolve("rank-1.json"))
        .replace("\"worldSize\": 4", "\"worldSize\": 8"));
    assertOneLine(Fixtures.doctor(tmp.toString()), "commplan-doctor: " + tmp.resolve("b.json")
        + ": worldSize 8, but " + tmp.resolve("a.json") + " says 4");
    Files.writeString(tmp.resolve("b.json"), Files.readString(fine.resolve("rank-1.json"))
        .replace("\"backend\": \"local\"", "\"backend\": \"mpi\""));
    assertOneLine(Fixtures.doctor(tmp.toString()), "commplan-doctor: " + tmp.resolve("b.json")
        + ": backend \"mpi\", but " + tmp.resolve("a.json") + " says \"local\"");
    Files.write(tmp.resolve("b.json"), new byte[] {'{', (byte) 0xC3, '}'});
    assertOneLine(Fixtures.doctor(tmp.toString()), "commplan-doctor: " + tmp.resolve("b.json")
        + ": not valid JSON: the file is not UTF-8 text");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      ''                 | no folder given (usage: java -jar commplan-doctor.jar [--html OUT] [--late-ms MS] DIR)
      --verbose          | unknown option --verbose (usage: java -jar commplan-doctor.jar [--html OUT] [--late-ms MS] DIR)
      --html             | --html needs a value (usage: java -jar commplan-doctor.jar [--html OUT] [--late-ms MS] DIR)
      --late-ms,soon,dir | --late-ms takes a whole number of milliseconds, 0 or more, not soon
      a,b                | one folder only, given a and b (usage: java -jar commplan-doctor.jar [--html OUT] [--late-ms MS] DIR)
      """)
  void aWrongCommandLineIsOneLineWithTheUsage(String args, String expected) {
    String[] argv = args.isEmpty() ? new String[0] : args.split(",");
    assertOneLine(Fixtures.doctor(argv), "commplan-doctor: " + expected);
  }

  @Test
  void helpPrintsTheUsageAndExitsZero() {
    Result r = Fixtures.doctor("--help");
    assertEquals(0, r.status(), r.all());
    assertTrue(r.out().startsWith(Doctor.USAGE + "\n"), r.all());
  }

  @Test
  void htmlIsWrittenBesideTheSameTextAndStatus(@TempDir Path tmp) throws Exception {
    Path page = tmp.resolve("report.html");
    Result plain = Fixtures.doctor(Fixtures.dir("stuck").toString());
    Result r = Fixtures.doctor("--html", page.toString(), Fixtures.dir("stuck").toString());
    assertEquals(1, r.status(), r.all());
    assertEquals(plain.out(), r.out());
    assertEquals("commplan-doctor: wrote " + page + "\n", r.err());
    assertTrue(Files.readString(page).startsWith("<!DOCTYPE html>"));
    Path nowhere = tmp.resolve("no-such-folder/report.html");
    Result failed = Fixtures.doctor("--html", nowhere.toString(), Fixtures.dir("stuck").toString());
    assertEquals(2, failed.status(), failed.all());
    assertTrue(failed.err().startsWith("commplan-doctor: " + nowhere + ": cannot write the page: "), failed.all());
    assertEquals(1, failed.err().lines().count(), failed.all());
  }

  private static void assertOneLine(Result r, String line) {
    assertEquals(2, r.status(), r.all());
    assertEquals("", r.out(), r.all());
    assertEquals(line + "\n", r.err(), r.all());
  }

  /** The report's section of the group whose header starts with {@code header}. */
  private static String section(String report, String header) {
    int start = report.indexOf("\n" + header) + 1;
    int end = report.indexOf("\n\n", start);
    return report.substring(start, end + 1);
  }
}
