package dev.commplan.runtime.agreement;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import java.util.ArrayList;
import java.util.List;

/**
 * One call as the agreement check compares it: {@value #LONGS} longs, so that a window of calls is an
 * array the ranks can all-gather and compare element by element. Word 0 packs what kind of call it is,
 * the collective, the data type, the op and the root or peer; word 1 is the count of a call, or the
 * instance of a plan ({@link PlanNames}); words 2 and 3 name a plan (a hash of its name, and the step, or
 * -1 for a whole execute). Unused fields are 0, so two ranks that made the same call write the same four
 * words.
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
  /** A bucket of a bucketed plan's round: as a plan's step, with the bucket's index in word 0's upper half. */
  static final int BUCKET = 7;
  /**
   * A bucketed plan closed with its round open ({@link Agreement#roundClosed}): word 0's upper half holds the
   * first bucket never enqueued, word 3 the fields not marked ready (a bit per handle below 63; bit 63: more).
   */
  static final int ROUND_CLOSED = 8;

  private CallRecord() {}

  /** Word 0 of a direct call (or a send or receive, whose peer goes where a root goes). */
  static long direct(int kind, Collective collective, DataType type, ReduceOp op, int root) {
    return kind | (long) (collective.ordinal() + 1) << 8 | (long) (type.ordinal() + 1) << 16
        | (long) (op == null ? 0 : op.ordinal() + 1) << 24 | (long) (root + 1) << 32;
  }

  static int kind(long word0) {
    return (int) (word0 & 0xff);
  }

  /**
   * The digest of {@code words[from, to)} (whole records): what a window check's header carries, made once
   * per check rather than once per call, so that recording a call is four stores. One lane per word of a
   * record, so that the four multiply chains run side by side; each step also rotates, so that a difference
   * in a high bit does not stay there to cancel with a later one.
   */
  static long digest(long[] words, int from, int to) {
    long a = 0x243f6a8885a308d3L;
    long b = 0x13198a2e03707344L;
    long c = 0xa4093822299f31d0L;
    long d = 0x082efa98ec4e6c89L;
    for (int i = from; i + 3 < to; i += LONGS) {
      a = Long.rotateLeft((a ^ words[i]) * 0x9e3779b97f4a7c15L, 31);
      b = Long.rotateLeft((b ^ words[i + 1]) * 0xc2b2ae3d27d4eb4fL, 29);
      c = Long.rotateLeft((c ^ words[i + 2]) * 0x165667b19e3779f9L, 27);
      d = Long.rotateLeft((d ^ words[i + 3]) * 0xd6e8feb86659fd93L, 33);
    }
    return mix(mix(mix(mix(to - from, a), b), c), d);
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
   * p.Grads, execute}, {@code plan t.Sum #2, step 1}, {@code send F32 to rank 1, count 4}.
   *
   * @param plans the plans this rank built, which name the plans in records
   */
  static String text(long[] words, int at, PlanNames plans) {
    long w0 = words[at];
    int kind = kind(w0);
    if (kind == ROUND_CLOSED) {
      return "plan " + plans.text(words[at + 2], words[at + 1]) + ", closed during a ready()/finish() round before"
          + " bucket " + (w0 >>> 32) + " was enqueued (fields never marked ready: "
          + plans.fields(words[at + 2], words[at + 3]) + ")";
    }
    if (isPlan(kind)) {
      return "plan " + plans.text(words[at + 2], words[at + 1]) + (kind == EXECUTE ? ", execute"
          : kind == LAUNCH ? ", launch of its captured graph" : kind == BUCKET
          ? ", bucket " + (w0 >>> 32) + " (step " + words[at + 3] + ")" : ", step " + words[at + 3]);
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
    if (isPlan(kind(x)) && a[at + 1] != b[bt + 1]) {
      out.add("plan instance (another plan of the same name)");
      return out;
    }
    if (kind(x) == ROUND_CLOSED) {
      if (x != y) {
        out.add("bucket");
      }
      if (a[at + 3] != b[bt + 3]) {
        out.add("fields marked ready");
      }
      return out;
    }
    if (kind(x) == BUCKET && x != y) {
      out.add("bucket");
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
    if (x >>> 32 != y >>> 32 && kind(x) != BUCKET) {
      out.add(kind(x) == SEND || kind(x) == RECV ? "peer" : "root");
    }
    if (a[at + 1] != b[bt + 1]) {
      out.add("count");
    }
    return out;
  }

  private static boolean isPlan(int kind) {
    return kind == EXECUTE || kind == STEP || kind == LAUNCH || kind == BUCKET || kind == ROUND_CLOSED;
  }

  private static <E> E field(E[] values, int code) {
    return code >= 1 && code <= values.length ? values[code - 1] : null;
  }
}
