package dev.commplan.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.commplan.doctor.FlightRecord.Kind;
import dev.commplan.doctor.FlightRecord.Operation;
import dev.commplan.doctor.FlightRecord.State;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * One file's rules (docs/flight-records.md), on the reference page's example: it reads as the page says,
 * every member the schema requires is required here too, and each broken rule is one line naming the member.
 */
class RecordParserTest {
  static final Path EXAMPLE = Path.of("..", "docs", "flight-record.example.json");
  static final Path SCHEMA = Path.of("..", "docs", "flight-record.schema.json");
  static final Path FILE = Path.of("rank-1.json");

  @Test
  void theReferenceExampleReads() throws Exception {
    FlightRecord r = RecordParser.parse(FILE, Files.readString(EXAMPLE));
    assertEquals("train-20261208-101503-4f2a", r.job());
    assertEquals("nccl", r.backend());
    assertEquals(1, r.worldRank());
    assertEquals(4, r.worldSize());
    assertEquals(918273645120000L, r.writtenAtNanos());
    assertEquals(List.of("world", "axis tp of mesh [dp=2, tp=2]", "axis dp of mesh [dp=2, tp=2]"),
        r.groups().stream().map(FlightRecord.Group::label).toList());
    FlightRecord.Group world = r.groups().get(0);
    assertEquals(45, world.nextSeq());
    assertEquals(List.of(Kind.COLLECTIVE, Kind.COLLECTIVE, Kind.CHECK, Kind.P2P, Kind.COLLECTIVE, Kind.COLLECTIVE),
        world.operations().stream().map(Operation::kind).toList());
    Operation last = world.operations().get(5);
    assertEquals(State.STARTED, last.state());
    assertNull(last.endedNanos());
    assertEquals(List.of("layer3.w", "layer3.b"), last.fields());
    assertEquals("#43 plan train.Step, step 1, reduce-scatter over tp BF16 SUM, count 4096 + all-gather over tp BF16,"
        + " count 4096, fields [attnOut, attnShard, mlpShard, mlpIn]", Words.operation(world.operations().get(4)));
    assertEquals(world.operations().get(4).text(), Words.what(world.operations().get(4)),
        "the doctor's words are the runtime's");
  }

  /** Every member the schema lists as required, taken out of the example, is named as missing. */
  @Test
  void everyMemberTheSchemaRequiresIsRequired() throws Exception {
    @SuppressWarnings("unchecked")
    Map<String, Object> schema = (Map<String, Object>) Json.parse(Files.readString(SCHEMA));
    Map<String, Object> defs = map(schema.get("$defs"));
    Map<String, List<String>> paths = Map.of(
        "", required(schema),
        "writtenAt", required(map(map(schema.get("properties")).get("writtenAt"))),
        "groups[0]", required(map(defs.get("group"))),
        "groups[0].operations[0]", required(map(defs.get("operation"))),
        "groups[0].operations[0].calls[0]", required(map(defs.get("call"))));
    int checked = 0;
    for (Map.Entry<String, List<String>> level : paths.entrySet()) {
      for (String member : level.getValue()) {
        Object example = copy(Json.parse(Files.readString(EXAMPLE)));
        at(example, level.getKey()).remove(member);
        String text = JsonText.of(example);
        BadInputException e = assertThrows(BadInputException.class, () -> RecordParser.parse(FILE, text), member);
        String where = level.getKey().isEmpty() ? "the record" : level.getKey();
        String expected = member.equals("format")
            ? FILE + ": not a CommPlan flight record (its \"format\" is missing, not \"commplan-flight-record\")"
            : FILE + ": " + where + " has no \"" + member + "\"";
        assertEquals(expected, e.getMessage());
        checked++;
      }
    }
    assertEquals(11 + 2 + 6 + 13 + 8, checked);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
      `"state": "started"`         | `"state": "done"`     | groups[0].operations[5].state is "done", not one of enqueued, started, completed, failed
      `"kind": "p2p"`              | `"kind": "send"`      | groups[0].operations[3].kind is "send", not one of collective, check, p2p, local
      `"seq": 41`                  | `"seq": 40`           | groups[0].operations[1].seq is 40, not above the 40 before it (sequence numbers rise, oldest first)
      `"nextSeq": 45`              | `"nextSeq": 44`       | groups[0].operations[5].seq is 44, not below the group's nextSeq 44
      `"seq": -1`                  | `"seq": 7`            | groups[0].operations[3].seq is 7; a p2p operation has none (-1)
      `"worldRank": 1`             | `"worldRank": 2`      | groups[0].rank is 1, but ranks[1] is world rank 1, not this file's 2
      `"worldRank": 1`             | `"worldRank": 4`      | worldRank is 4, outside [0, 3]
      `"size": 4`                  | `"size": 3`           | groups[0].size is 3, but "ranks" lists 4
      `"ranks": [0, 1, 2, 3]`      | `"ranks": [0, 1, 1, 3]` | groups[0].ranks holds 1 twice
      `"ranks": [1, 3]`            | `"ranks": [1, 9]`     | groups[2].ranks holds 9, not a world rank (the world has 4)
      `"waitedNanos": 210000`      | `"waitedNanos": -5`   | groups[0].operations[0].waitedNanos is -5, below 0 (null when not known)
      `"version": 1`               | `"version": "1"`      | version is the string "1", not an integer
      `"job": "train-20261208-101503-4f2a"` | `"job": ""`  | job is empty
      `"peer": 3`                  | `"peer": 4`           | groups[0].operations[3].calls[0].peer is 4, outside [0, 3]
      `"peer": 3`                  | `"peer": null`        | groups[0].operations[3].calls holds a call without a peer in a p2p operation (collectives make it a collective operation)
      `"fields": ["activations"]`  | `"fields": "activations"` | groups[0].operations[3].calls[0].fields is the string "activations", not an array
      `"groups": [`                | `"groups": [], "x": [` | groups is empty (every rank belongs to the world at least)
      """)
  void aBrokenRuleIsOneLineNamingTheMember(String from, String to, String message) throws Exception {
    String example = Files.readString(EXAMPLE);
    int at = example.indexOf(from);
    String text = example.substring(0, at) + to + example.substring(at + from.length());
    BadInputException e = assertThrows(BadInputException.class, () -> RecordParser.parse(FILE, text));
    assertEquals(FILE + ": " + message, e.getMessage());
  }

  @Test
  void aGroupTwiceIsRefused() throws Exception {
    String example = Files.readString(EXAMPLE);
    String dp = "\"label\": \"axis dp of mesh [dp=2, tp=2]\"";
    String text = example.replace("\"label\": \"axis tp of mesh [dp=2, tp=2]\"", dp)
        .replace("\"ranks\": [0, 1],", "\"ranks\": [1, 3],").replace("\"rank\": 1,\n      \"size\": 2", "\"rank\": 0,\n      \"size\": 2");
    BadInputException e = assertThrows(BadInputException.class, () -> RecordParser.parse(FILE, text));
    assertEquals(FILE + ": groups[2] repeats the group \"axis dp of mesh [dp=2, tp=2]\" of world ranks [1, 3] (a label"
        + " and members must name one group)", e.getMessage());
  }

  @Test
  void membersTheFormatDoesNotListAreIgnored() throws Exception {
    String text = Files.readString(EXAMPLE).replace("\"host\":", "\"cudaDevice\": 1, \"host\":");
    assertEquals(1, RecordParser.parse(FILE, text).worldRank());
  }

  @Test
  void aValueFromTheFileStaysOnOneLineInTheMessage() throws Exception {
    String text = Files.readString(EXAMPLE).replace("\"state\": \"started\"", "\"state\": \"a\\nb\"");
    BadInputException e = assertThrows(BadInputException.class, () -> RecordParser.parse(FILE, text));
    assertEquals(FILE + ": groups[0].operations[5].state is \"a\\u000ab\", not one of enqueued, started, completed,"
        + " failed", e.getMessage());
  }

  /** The object at {@code path} ({@code groups[0].operations[0]}) in {@code value}. */
  private static Map<String, Object> at(Object value, String path) {
    Object at = value;
    for (String part : path.isEmpty() ? new String[0] : path.split("\\.")) {
      int bracket = part.indexOf('[');
      String name = bracket < 0 ? part : part.substring(0, bracket);
      at = map(at).get(name);
      if (bracket >= 0) {
        at = ((List<?>) at).get(Integer.parseInt(part.substring(bracket + 1, part.length() - 1)));
      }
    }
    return map(at);
  }

  /** A copy that can be changed ({@link Json} returns unmodifiable maps and lists). */
  private static Object copy(Object v) {
    if (v instanceof Map<?, ?> m) {
      Map<String, Object> c = new LinkedHashMap<>();
      m.forEach((k, x) -> c.put((String) k, copy(x)));
      return c;
    }
    if (v instanceof List<?> l) {
      List<Object> c = new ArrayList<>();
      l.forEach(x -> c.add(copy(x)));
      return c;
    }
    return v;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object v) {
    return (Map<String, Object>) v;
  }

  private static List<String> required(Map<String, Object> schema) {
    return ((List<?>) schema.get("required")).stream().map(String.class::cast).toList();
  }
}
