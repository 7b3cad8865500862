package dev.commplan.doctor;

import dev.commplan.doctor.FlightRecord.Call;
import dev.commplan.doctor.FlightRecord.Operation;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * How the doctor says things, in the runtime's own words: an operation as its timeout messages name it
 * ({@code plan p.Grads, step 0, all-reduce F32 SUM, count 16, fields [w, b]}), durations, lists of ranks, and
 * values from a file quoted on one line.
 */
final class Words {
  private Words() {}

  /** {@code #7 plan p.Grads, step 3, all-gather F32, count 256, fields [shard]}. */
  static String operation(Operation op) {
    return (op.kind().aligned() ? "#" + op.seq() + " " : "") + what(op);
  }

  /** The operation without its number; as {@code OperationLabel.toString()} in the runtime. */
  static String what(Operation op) {
    if (op.calls().isEmpty()) {
      return op.text();
    }
    String calls = op.calls().stream().map(Words::call).collect(Collectors.joining(" + "));
    if (op.kind() == FlightRecord.Kind.CHECK) {
      return "agreement check: " + calls;
    }
    if (op.plan() == null) {
      return calls + " (called directly)";
    }
    return "plan " + op.plan() + ", step " + op.step() + (op.bucket() >= 0 ? ", bucket " + op.bucket() : "") + ", "
        + calls + ", fields " + op.fields();
  }

  /** {@code all-reduce over tp F32 SUM, count 16}, {@code send F32 to rank 1, count 4}. */
  static String call(Call c) {
    StringBuilder s = new StringBuilder(c.collective());
    if (c.over() != null) {
      s.append(" over ").append(c.over());
    }
    if (c.type() != null) {
      s.append(' ').append(c.type());
    }
    if (c.op() != null) {
      s.append(' ').append(c.op());
    }
    if (c.root() != null) {
      s.append(" root ").append(c.root());
    }
    if (c.peer() != null) {
      s.append(c.collective().equals("send") ? " to rank " : " from rank ").append(c.peer());
    }
    if (c.count() != null) {
      s.append(", count ").append(c.count());
    }
    return s.toString();
  }

  /** {@code 146 us}, {@code 50.1 ms}, {@code 5.00 s}: three figures at most, in ASCII. */
  static String duration(long nanos) {
    if (nanos < 999_500) {
      return Math.round(nanos / 1e3) + " us";
    }
    if (nanos < 999_950_000) {
      return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }
    return String.format(Locale.ROOT, "%.2f s", nanos / 1e9);
  }

  /** {@code rank 3}, {@code ranks 0, 1, 2}. */
  static String ranks(Collection<Integer> ranks) {
    return (ranks.size() == 1 ? "rank " : "ranks ") + list(ranks);
  }

  /** {@code 0, 1, 2}. */
  static String list(Collection<?> items) {
    return items.stream().map(String::valueOf).collect(Collectors.joining(", "));
  }

  /** {@code 1 collective}, {@code 2 collectives}. */
  static String count(long n, String one) {
    return n + " " + (n == 1 ? one : one + "s");
  }

  /** A value from a file, in quotes, on one line whatever it holds, and not too long to read. */
  static String quote(String s) {
    String shown = s.length() > 60 ? s.substring(0, 60) + "..." : s;
    StringBuilder q = new StringBuilder("\"");
    for (char c : shown.toCharArray()) {
      if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') {
        q.append(c == '"' || c == '\\' ? "\\" + c : String.format("\\u%04x", (int) c));
      } else {
        q.append(c);
      }
    }
    return q.append('"').toString();
  }

  /** A value from a file as one line of a report: control characters (a newline in a message) as spaces. */
  static String oneLine(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      b.append(c < 0x20 || c == 0x7f ? ' ' : c);
    }
    return b.toString().strip();
  }

  static List<Integer> sorted(Collection<Integer> ranks) {
    return ranks.stream().sorted().toList();
  }
}
