package dev.commplan.runtime.agreement;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One call as the agreement check compares it: {@value #LONGS} longs, so that a window of calls is an
 * array the ranks can all-gather and compare element by element. Word 0 packs what kind of call it is,
 * the collective, the data type, the op and the root or peer; word 1 is the count; words 2 and 3 name a
 * plan (a hash of its name, and the step, or -1 for a whole execute). Unused fields are 0, so two ranks
 * that made the same call write the same four words.
 */
final class CallRecord {
  /** Longs of one record. */
  static final int LONGS = 4;

  static final int DIRECT = 1;
  static final int EXECUTE = 2;
  static final int STEP = 3;
  static final int LAUNCH = 4;
  static final int SEND = 5;
  static final int RECV = 6;
  /** A bucket of a bucketed plan's round: word 1 is its index, word 3 its step. */
  static final int BUCKET = 7;

  private CallRecord() {}

  /** Word 0 of a direct call (or a send or receive, whose peer goes where a root goes). */
  static long direct(int kind, Collective collective, DataType type, ReduceOp op, int root) {
    return kind | (long) (collective.ordinal() + 1) << 8 | (long) (type.ordinal() + 1) << 16
        | (long) (op == null ? 0 : op.ordinal() + 1) << 24 | (long) (root + 1) << 32;
  }

  /** The hash that names a plan in records: FNV-1a of its name (its schedule is compared when it is built). */
  static long planId(String planName) {
    long hash = 0xcbf29ce484222325L;
    for (int i = 0; i < planName.length(); i++) {
      hash = (hash ^ planName.charAt(i)) * 0x100000001b3L;
    }
    return hash == 0 ? 1 : hash; // 0 means "no plan"
  }

  static int kind(long word0) {
    return (int) (word0 & 0xff);
  }

  /** One step of a running 64-bit digest (a multiply and xor-shift mix, as in SplitMix64's finalizer). */
  static long mix(long digest, long word) {
    long z = (digest ^ word) * 0x9e3779b97f4a7c15L;
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  /**
   * What a record says, for messages: {@code direct call: broadcast F32 root 0, count 8}, {@code plan
   * p.Grads, execute}, {@code send F32 to rank 1, count 4}.
   *
   * @param plans plan names by {@link #planId}, for plans this rank built
   */
  static String text(long[] words, int at, Map<Long, String> plans) {
    long w0 = words[at];
    int kind = kind(w0);
    if (kind == EXECUTE || kind == STEP || kind == LAUNCH) {
      String name = plans.getOrDefault(words[at + 2], "#" + Long.toHexString(words[at + 2]) + " (not built here)");
      return "plan " + name + (kind == EXECUTE ? ", execute" : kind == LAUNCH ? ", launch of its captured graph"
          : ", step " + words[at + 3]);
    }
    if (kind == BUCKET) {
      String name = plans.getOrDefault(words[at + 2], "#" + Long.toHexString(words[at + 2]) + " (not built here)");
      return "plan " + name + ", bucket " + words[at + 1] + " (step " + words[at + 3] + ")";
    }
    if (kind != DIRECT && kind != SEND && kind != RECV) {
      return "no call (a record of kind " + kind + ": not a call this check knows)";
    }
    Collective collective = field(Collective.values(), (int) (w0 >>> 8 & 0xff));
    DataType type = field(DataType.values(), (int) (w0 >>> 16 & 0xff));
    ReduceOp op = field(ReduceOp.values(), (int) (w0 >>> 24 & 0xff));
    int root = (int) (w0 >>> 32) - 1;
    StringBuilder s = new StringBuilder(kind == DIRECT ? "direct call: " : "");
    s.append(collective == null ? "?" : collective.label()).append(' ').append(type == null ? "?" : type.name());
    if (op != null) {
      s.append(' ').append(op.name());
    }
    if (kind == SEND) {
      s.append(" to rank ").append(root);
    } else if (kind == RECV) {
      s.append(" from rank ").append(root);
    } else if (collective != null && collective.hasRoot()) {
      s.append(" root ").append(root);
    }
    return s.append(", count ").append(words[at + 1]).toString();
  }

  /** The names of the fields in which two records differ: {@code [root]}, {@code [count, data type]}. */
  static List<String> differences(long[] a, int at, long[] b, int bt) {
    List<String> out = new ArrayList<>();
    long x = a[at];
    long y = b[bt];
    if (kind(x) != kind(y) || a[at + 2] != b[bt + 2]) {
      out.add("call (another call at this place)");
      return out;
    }
    if (a[at + 3] != b[bt + 3]) {
      out.add("step");
    }
    if ((x >>> 8 & 0xff) != (y >>> 8 & 0xff)) {
      out.add("collective");
    }
    if ((x >>> 16 & 0xff) != (y >>> 16 & 0xff)) {
      out.add("data type");
    }
    if ((x >>> 24 & 0xff) != (y >>> 24 & 0xff)) {
      out.add("op");
    }
    if (x >>> 32 != y >>> 32) {
      out.add(kind(x) == SEND || kind(x) == RECV ? "peer" : "root");
    }
    if (a[at + 1] != b[bt + 1]) {
      out.add(kind(x) == BUCKET ? "bucket" : "count");
    }
    return out;
  }

  private static <E> E field(E[] values, int code) {
    return code >= 1 && code <= values.length ? values[code - 1] : null;
  }
}
