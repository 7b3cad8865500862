package dev.commplan.runtime.spi;

import java.net.InetAddress;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A rank's record ({@link FlightLog}) as the JSON text of docs/flight-records.md, version 1: every member the
 * format lists, {@code null} where a value does not apply or is not known; the operations of each group merged
 * from its recorders, oldest first ({@link FlightGroup#operations()}).
 */
final class FlightRecordJson {
  static final String FORMAT = "commplan-flight-record";
  static final int VERSION = 1;

  private static volatile String host;

  private FlightRecordJson() {}

  /** The file's text: {@code log}'s record, written at {@code epochMillis} and {@code nanoTime}. */
  static String render(FlightLog log, String reason, long epochMillis, long nanoTime) {
    FlightJob job = log.job();
    StringBuilder s = new StringBuilder(4096);
    s.append("{\n  \"format\": ").append(quote(FORMAT)).append(",\n  \"version\": ").append(VERSION)
        .append(",\n  \"job\": ").append(quote(job.id()))
        .append(",\n  \"backend\": ").append(quote(job.backend()))
        .append(",\n  \"worldRank\": ").append(log.worldRank())
        .append(",\n  \"worldSize\": ").append(job.worldSize())
        .append(",\n  \"host\": ").append(quote(host()))
        .append(",\n  \"pid\": ").append(ProcessHandle.current().pid())
        .append(",\n  \"reason\": ").append(quote(reason))
        .append(",\n  \"writtenAt\": {\"epochMillis\": ").append(epochMillis).append(", \"nanoTime\": ").append(nanoTime)
        .append("},\n  \"groups\": [");
    Map<String, Integer> seen = new HashMap<>();
    boolean first = true;
    for (FlightGroup g : log.openGroups()) {
      int[] ranks = g.givenWorldRanks() != null ? g.givenWorldRanks() : job.membersOf(g.identity(), g.size());
      if (ranks == null) {
        continue; // its members are not known here: a group without them would not line up with anyone's
      }
      String key = g.label() + Arrays.toString(ranks);
      int times = seen.merge(key, 1, Integer::sum);
      String label = times == 1 ? g.label() : g.label() + " #" + times; // the same split made twice, told apart
      s.append(first ? "\n" : ",\n");
      group(s, g, label, ranks);
      first = false;
    }
    return s.append("\n  ]\n}\n").toString();
  }

  private static void group(StringBuilder s, FlightGroup g, String label, int[] ranks) {
    List<FlightRecorder.Entry> ops = g.operations();
    long nextSeq = g.nextSeq(); // after the operations: every number kept is below it
    s.append("    {\n      \"label\": ").append(quote(label)).append(",\n      \"ranks\": [");
    for (int i = 0; i < ranks.length; i++) {
      s.append(i == 0 ? "" : ", ").append(ranks[i]);
    }
    s.append("],\n      \"rank\": ").append(g.rank()).append(",\n      \"size\": ").append(g.size())
        .append(",\n      \"nextSeq\": ").append(nextSeq).append(",\n      \"operations\": [");
    for (int i = 0; i < ops.size(); i++) {
      s.append(i == 0 ? "\n" : ",\n");
      operation(s, ops.get(i));
    }
    s.append(ops.isEmpty() ? "]\n    }" : "\n      ]\n    }");
  }

  private static void operation(StringBuilder s, FlightRecorder.Entry e) {
    OperationLabel l = e.label();
    OperationLabel.Kind kind = e.kind();
    s.append("        {\"seq\": ").append(kind.sequenced() ? e.groupSeq() : -1)
        .append(", \"kind\": ").append(quote(kind.name().toLowerCase(Locale.ROOT)))
        .append(", \"plan\": ").append(l.planName() == null ? "null" : quote(l.planName()))
        .append(", \"step\": ").append(l.planName() == null ? -1 : l.step())
        .append(", \"bucket\": ").append(l.planName() == null ? -1 : l.bucket())
        .append(",\n         \"calls\": [");
    List<OperationLabel.Call> calls = l.calls();
    for (int i = 0; i < calls.size(); i++) {
      s.append(i == 0 ? "" : ",\n                   ");
      call(s, calls.get(i));
    }
    s.append("],\n         \"text\": ").append(quote(l.toString()))
        .append(",\n         \"stream\": ").append(quote(e.stream()))
        .append(", \"state\": ").append(quote(state(e.state())))
        .append(",\n         \"enqueuedNanos\": ").append(e.enqueueNanos())
        .append(", \"startedNanos\": ").append(nanos(e.startNanos()))
        .append(", \"endedNanos\": ").append(nanos(e.endNanos()))
        .append(", \"waitedNanos\": ").append(e.waitedNanos() < 0 ? "null" : Long.toString(e.waitedNanos()))
        .append('}');
  }

  private static void call(StringBuilder s, OperationLabel.Call c) {
    s.append("{\"collective\": ").append(quote(c.collective()))
        .append(", \"type\": ").append(c.type() == null ? "null" : quote(c.type().name()))
        .append(", \"op\": ").append(c.op() == null ? "null" : quote(c.op().name()))
        .append(", \"count\": ").append(c.count() < 0 ? "null" : Long.toString(c.count()))
        .append(", \"root\": ").append(c.root() < 0 ? "null" : Integer.toString(c.root()))
        .append(", \"peer\": ").append(c.peer() < 0 ? "null" : Integer.toString(c.peer()))
        .append(", \"over\": ").append(c.over() == null ? "null" : quote(c.over()))
        .append(", \"fields\": [");
    List<String> fields = c.fields();
    for (int i = 0; i < fields.size(); i++) {
      s.append(i == 0 ? "" : ", ").append(quote(fields.get(i)));
    }
    s.append("]}");
  }

  /** The format's name of a state: {@code enqueued}, {@code started}, {@code completed}, {@code failed}. */
  static String state(FlightRecorder.State state) {
    return switch (state) {
      case ENQUEUED -> "enqueued";
      case STARTED -> "started";
      case FINISHED -> "completed";
      case FAILED -> "failed";
    };
  }

  /** A recorder's 0 ("not known") is the format's null. */
  private static String nanos(long nanos) {
    return nanos == 0 ? "null" : Long.toString(nanos);
  }

  /** {@code text} as a JSON string (RFC 8259): quotes, backslashes and control characters escaped. */
  static String quote(String text) {
    StringBuilder s = new StringBuilder(text.length() + 2).append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> s.append("\\\"");
        case '\\' -> s.append("\\\\");
        case '\n' -> s.append("\\n");
        case '\r' -> s.append("\\r");
        case '\t' -> s.append("\\t");
        default -> {
          if (c < 0x20) {
            s.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            s.append(c);
          }
        }
      }
    }
    return s.append('"').toString();
  }

  /** This host's name, looked up once. */
  private static String host() {
    String h = host;
    if (h == null) {
      try {
        h = InetAddress.getLocalHost().getHostName();
      } catch (java.io.IOException | SecurityException e) {
        h = System.getenv().getOrDefault("HOSTNAME", "unknown");
      }
      host = h;
    }
    return h;
  }
}
