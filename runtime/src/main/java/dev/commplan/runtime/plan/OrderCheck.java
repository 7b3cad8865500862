package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.PlanOrderException;
import dev.commplan.runtime.U8Buffer;
import dev.commplan.runtime.guard.StreamProgress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;

/**
 * The execute-order check of one step of one plan, for every backend ({@link PlanBuilder#orderCheck}):
 * the step carries one more call, an all-gather of a {@value #TAG_BYTES}-byte tag that names the plan and
 * the step. Collectives are matched by their order, so when another rank runs a step of another plan at
 * the same place, this all-gather meets that step's all-gather, and the tags gathered here differ. After
 * the synchronize that covers the execute, every rank reads the gathered tags ({@link #verify}) and, on a
 * difference, fails that synchronize with {@link PlanOrderException} naming both plans and the ranks.
 *
 * <p>The tag is the text {@code plan p.X, step 0} (cut to {@value #TEXT_BYTES} bytes of UTF-8) and a
 * 64-bit hash of the whole text, so a message can name the other rank's plan without any table.
 */
final class OrderCheck implements StreamProgress.AfterSynchronize {
  /** Bytes of one rank's tag. */
  static final int TAG_BYTES = 64;
  private static final int TEXT_BYTES = TAG_BYTES - 8;

  private final String what;
  private final byte[] tag;
  private final U8Buffer gathered;
  private final int rank;
  private final int ranks;
  private final byte[] scratch;

  private OrderCheck(String what, byte[] tag, U8Buffer gathered, int rank, int ranks) {
    this.what = what;
    this.tag = tag;
    this.gathered = gathered;
    this.rank = rank;
    this.ranks = ranks;
    this.scratch = new byte[TAG_BYTES * ranks];
  }

  /** The check of step {@code step} of plan {@code planName}: writes the tag into {@code send}, reads {@code gathered}. */
  static OrderCheck of(String planName, int step, Buffer send, Buffer gathered, int rank, int ranks) {
    String what = "plan " + planName + ", step " + step;
    byte[] tag = tag(what);
    ((U8Buffer) send).copyFrom(tag);
    return new OrderCheck(what, tag, (U8Buffer) gathered, rank, ranks);
  }

  /**
   * Declares the check's calls to {@code b} ({@link PlanBuilder#orderCheck(boolean)}): per step of
   * {@code calls}, in ascending order, a tag field, the field that gathers every rank's tag, and an
   * all-gather between them in that step.
   *
   * @return per step, the handles of the tag and of the gathered tags
   */
  static int[][] declare(PlanBuilder b, List<Declarations.Call> calls, int ranks) {
    TreeSet<Integer> steps = new TreeSet<>();
    for (Declarations.Call call : calls) {
      steps.add(call.step());
    }
    int[][] handles = new int[steps.size()][];
    int i = 0;
    for (int step : steps) {
      int tag = b.buffer(sendField(step), type(), TAG_BYTES, "{\"" + TAG_BYTES + "\"}", null);
      int gathered = b.buffer(gatheredField(step), type(), (long) TAG_BYTES * ranks,
          "{\"ranks\", \"" + TAG_BYTES + "\"}", null);
      b.collective(step, Collective.ALL_GATHER, tag, gathered, null, -1);
      handles[i++] = new int[] {tag, gathered};
    }
    return handles;
  }

  /** The checks of a built plan, one per step, from the handles {@link #declare} returned. */
  static OrderCheck[] attach(String planName, Schedule schedule, Buffer[] views, int[][] handles, int rank,
      int ranks) {
    OrderCheck[] checks = new OrderCheck[handles.length];
    for (int s = 0; s < handles.length; s++) {
      checks[s] = of(planName, schedule.steps().get(s).number(), views[handles[s][0]], views[handles[s][1]], rank,
          ranks);
    }
    return checks;
  }

  /** The field names of the tag and of the gathered tags of {@code step}: they show in describe() and fingerprints. */
  static String sendField(int step) {
    return "$order@" + step;
  }

  static String gatheredField(int step) {
    return "$order@" + step + ".all";
  }

  static DataType type() {
    return DataType.U8;
  }

  private static byte[] tag(String what) {
    byte[] text = what.getBytes(StandardCharsets.UTF_8);
    byte[] tag = new byte[TAG_BYTES];
    System.arraycopy(text, 0, tag, 0, Math.min(text.length, TEXT_BYTES));
    long hash = 0xcbf29ce484222325L; // FNV-1a over the whole text: two long names cut alike still differ
    for (byte b : text) {
      hash = (hash ^ (b & 0xff)) * 0x100000001b3L;
    }
    for (int i = 0; i < 8; i++) {
      tag[TEXT_BYTES + i] = (byte) (hash >>> (8 * i));
    }
    return tag;
  }

  /** The text of a gathered tag (up to its first zero byte), as far as it was kept. */
  private static String text(byte[] tags, int from) {
    int end = from;
    while (end < from + TEXT_BYTES && tags[end] != 0) {
      end++;
    }
    return end == from ? "nothing of a plan (a direct call, or no order check there)"
        : new String(tags, from, end - from, StandardCharsets.UTF_8);
  }

  @Override
  public void verify() {
    gathered.copyTo(0, scratch, 0, scratch.length);
    List<Integer> differing = new ArrayList<>();
    int firstOther = -1;
    for (int r = 0; r < ranks; r++) {
      if (!Arrays.equals(scratch, r * TAG_BYTES, (r + 1) * TAG_BYTES, tag, 0, TAG_BYTES)) {
        differing.add(r);
        firstOther = firstOther < 0 ? r : firstOther;
      }
    }
    if (differing.isEmpty()) {
      return;
    }
    String found = text(scratch, firstOther * TAG_BYTES);
    throw new PlanOrderException("the ranks execute their plans in different orders: where rank " + rank + " ran "
        + what + ", rank" + (differing.size() == 1 ? " " + differing.getFirst() : "s " + differing) + " ran " + found
        + " (the order check: -D" + PlanBuilder.ORDER_CHECK_PROPERTY + "=true or PlanBuilder.orderCheck(true)); every"
        + " rank must execute the same plans, and their steps, in the same order", what, found, differing);
  }
}
