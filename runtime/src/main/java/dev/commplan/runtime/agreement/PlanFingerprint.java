package dev.commplan.runtime.agreement;

import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.PlanMismatchException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A plan's fingerprint: its schedule as canonical text lines, and their SHA-256. {@code PlanBuilder.build()}
 * renders it ({@code plan.FingerprintLines}) and compares it across the ranks before compiling, so that ranks that built different plans (a dim bound
 * differently, a rank-dependent branch, another version of the code) fail at once, every one of them,
 * with a message naming the first differing operation, instead of issuing different collectives.
 *
 * <p>The lines are: a header (plan name and ranks); one line per declared collective in execution order
 * (step, then declaration order) with its collective, op, root, fields, data types and counts and
 * whether it is in place ({@code op 3: step 1 @AllReduce(op = SUM) grads F32[4096]}); then one line per
 * NCCL call of the built schedule, which catches ranks that declare the same operations but coalesce them
 * differently (user-bound buffers adjacent in memory on one rank only). Nothing rank-specific (memory
 * addresses, offsets) is in them.
 *
 * <p>{@link #check} goes through the agreement check's exchange ({@link TextExchange}: an all-gather of
 * every rank's SHA-256, and of the texts only where one differs), so it works unchanged on every backend
 * and whether the communicator's agreement check is on or off.
 */
public final class PlanFingerprint {
  /** The prefix of an operation's line: {@code op 3: step 1 @AllReduce(op = SUM) grads F32[4096]}. */
  public static final String OP_PREFIX = "op ";
  /** The prefix of an NCCL call's line of the built schedule: {@code call 2: step 1 all-reduce ...}. */
  public static final String CALL_PREFIX = "call ";
  /** The prefix of this rank's build failure, the last line where the build failed here. */
  public static final String FAILED_PREFIX = "build failed on this rank: ";

  private final String planName;
  private final List<String> lines;
  private final String text;
  private final byte[] digest;

  /**
   * A fingerprint of {@code lines} (the canonical rendering, see the class comment); {@code
   * plan.FingerprintLines} makes them.
   *
   * @param planName the plan's name, for messages
   * @param lines the canonical lines, header first
   */
  public PlanFingerprint(String planName, List<String> lines) {
    this.planName = Objects.requireNonNull(planName, "planName");
    this.lines = List.copyOf(lines);
    this.text = String.join("\n", this.lines);
    this.digest = TextExchange.sha256(text.getBytes(StandardCharsets.UTF_8));
  }

  /** {@return the canonical lines} */
  public List<String> lines() {
    return lines;
  }

  /** {@return the lines joined by {@code '\n'}: what is hashed} */
  public String text() {
    return text;
  }

  /** {@return SHA-256 of {@link #text()} in UTF-8, 32 bytes, a new array each call} */
  public byte[] digest() {
    return digest.clone();
  }

  /** {@return {@link #digest()} as lower-case hex} */
  public String hex() {
    return HexFormat.of().formatHex(digest);
  }

  /**
   * Compares this fingerprint with every other rank's; collective: every rank of {@code comm} must call it.
   * On one rank it does nothing. Otherwise one all-gather of each rank's SHA-256 and length and, only if
   * they differ, a second of every rank's text ({@link TextExchange}), each waited for.
   *
   * @param comm the communicator the plan is built on; its stream is used and synchronized
   * @throws PlanMismatchException on every rank, with the same message, if any rank's fingerprint differs
   * @throws CommTimeoutException naming the plan, where a rank did not come to this build in time
   */
  public void check(Communicator comm) {
    Agreement agreement = Agreement.of(comm);
    if (agreement == null) {
      return; // a communicator without an agreement check: nothing to compare through
    }
    List<String> byRank = TextExchange.differing(agreement, text, planName, "plan " + planName + ": the fingerprint"
        + " check of build() timed out; every rank must build the same plans in the same order", "did not get to this"
        + " one");
    if (byRank == null) {
      return;
    }
    PlanMismatchException mismatch = compare(planName, byRank);
    if (mismatch == null) { // the hashes differed but the texts did not: only a corrupted transfer does that
      throw new PlanMismatchException(
          "plan " + planName + ": the plan fingerprints differ between ranks but their texts agree; the exchange"
              + " was corrupted (check the interconnect), or a rank runs another version of CommPlan",
          planName, "", "", List.of(), List.of("fingerprint"));
    }
    throw mismatch;
  }

  /**
   * The mismatch between the ranks' fingerprint texts (indexed by rank), or null if they are all equal.
   * The reference is the text most ranks have (ties: the lowest rank's); the exception names the ranks
   * that differ from it, and for each distinct differing text (up to 4) its first differing line with
   * both sides.
   *
   * @param planName the plan's name, for the message
   * @param textsByRank every rank's {@link #text()}, indexed by rank
   * @return the exception to throw, or null if every text is the same
   */
  public static PlanMismatchException compare(String planName, List<String> textsByRank) {
    Map<String, List<Integer>> groups = new LinkedHashMap<>();
    for (int r = 0; r < textsByRank.size(); r++) {
      groups.computeIfAbsent(textsByRank.get(r), t -> new ArrayList<>()).add(r);
    }
    if (groups.size() <= 1) {
      return null;
    }
    Map.Entry<String, List<Integer>> reference = largest(groups);
    List<Integer> differing = new ArrayList<>();
    for (Map.Entry<String, List<Integer>> g : groups.entrySet()) {
      if (g != reference) {
        differing.addAll(g.getValue());
      }
    }
    differing.sort(null);
    int refRank = reference.getValue().getFirst();
    List<String> refLines = List.of(reference.getKey().split("\n", -1));

    StringBuilder m = new StringBuilder("plan ").append(planName).append(": the ranks built different plans (their")
        .append(" fingerprints differ), so they would issue different collectives (a hang or wrong data); every")
        .append(" rank fails here instead.\n  ")
        .append(ranksText(differing)).append(differing.size() == 1 ? " differs" : " differ").append(" from ")
        .append(ranksText(reference.getValue())).append(" (of ").append(textsByRank.size()).append(")");
    boolean opDiffers = false;
    boolean callDiffers = false;
    boolean failed = false;
    Difference first = null;
    int shown = 0;
    for (Map.Entry<String, List<Integer>> g : groups.entrySet()) {
      if (g == reference) {
        continue;
      }
      if (shown++ == 4) {
        m.append("\n  (further differing ranks not shown)");
        break;
      }
      List<String> lines = List.of(g.getKey().split("\n", -1));
      Difference d = firstDifference(refLines, lines);
      m.append("\n  first difference");
      if (g.getValue().size() > 1) {
        m.append(" (").append(ranksText(g.getValue())).append(")");
      }
      m.append(": ").append(position(d.reference(), d.other())).append("\n    rank ").append(refRank)
          .append(": ").append(d.referenceSide()).append("\n    rank ").append(g.getValue().getFirst()).append(": ")
          .append(d.otherSide());
      first = first == null ? d : first;
      failed |= d.isFailure();
      callDiffers |= !d.isFailure() && d.at().startsWith(CALL_PREFIX);
      opDiffers |= !d.isFailure() && !d.at().startsWith(CALL_PREFIX);
    }
    m.append("\n  fix: ").append(fix(failed, callDiffers, opDiffers));
    return new PlanMismatchException(m.toString(), planName, first.referenceSide(), first.otherSide(), differing,
        List.of(first.field()));
  }

  /** The group of ranks that built one plan and is the largest (the first of equals): the reference. */
  private static Map.Entry<String, List<Integer>> largest(Map<String, List<Integer>> groups) {
    Map.Entry<String, List<Integer>> reference = null;
    for (Map.Entry<String, List<Integer>> g : groups.entrySet()) {
      if (reference == null || g.getValue().size() > reference.getValue().size()) {
        reference = g;
      }
    }
    return reference;
  }

  /**
   * The first line where two fingerprints differ: {@code reference} and {@code other} (null where a side has no
   * line there), in the section {@code prefix} names, with each side's words for it.
   */
  private record Difference(String reference, String other, String referenceSide, String otherSide) {
    /** The line the difference is at (the reference's, or the other's where the reference has none). */
    String at() {
      return reference != null ? reference : other;
    }

    boolean isFailure() {
      return PlanFingerprint.isFailure(reference) || PlanFingerprint.isFailure(other);
    }

    /** What differs, for the exception's fields: the build, an NCCL call, an operation or the plan. */
    String field() {
      return isFailure() ? "build" : at().startsWith(CALL_PREFIX) ? "NCCL call"
          : at().startsWith(OP_PREFIX) ? "operation" : "plan";
    }
  }

  /**
   * Compares section by section (header, operations, build failure, NCCL calls), so that a missing operation
   * shows as missing rather than as the next section's first line.
   */
  private static Difference firstDifference(List<String> refLines, List<String> lines) {
    for (String prefix : new String[] {"", OP_PREFIX, FAILED_PREFIX, CALL_PREFIX}) {
      List<String> x = section(refLines, prefix);
      List<String> y = section(lines, prefix);
      int i = 0;
      while (i < x.size() && i < y.size() && x.get(i).equals(y.get(i))) {
        i++;
      }
      if (i < x.size() || i < y.size()) {
        String a = i < x.size() ? x.get(i) : null;
        String b = i < y.size() ? y.get(i) : null;
        return new Difference(a, b, side(a, refLines, prefix), side(b, lines, prefix));
      }
    }
    return new Difference(null, null, side(null, refLines, ""), side(null, lines, "")); // texts differ in no line
  }

  /** The fix a message ends with, by what differed. */
  private static String fix(boolean failed, boolean callDiffers, boolean opDiffers) {
    if (failed) {
      return "the plan failed to build on some ranks only (see that rank's message above, or its own exception"
          + " as this one's suppressed); fix that, and build the same plan on every rank";
    }
    if (callDiffers && !opDiffers) {
      return "the ranks declare the same operations but coalesce them into different NCCL calls: user-bound"
          + " buffers that are adjacent views of one allocation on some ranks (and so merged) are not on others;"
          + " bind buffers the same way on every rank, or let the plan allocate them";
    }
    return "build the plan identically on every rank: the same plan class and code version, the same dims"
        + " (counts come from them), and no rank-dependent collectives, steps, data types, ops or roots";
  }

  /** The lines of one section: those starting with {@code prefix}; "" is the header (the rest). */
  private static List<String> section(List<String> lines, String prefix) {
    if (!prefix.isEmpty()) {
      return lines.stream().filter(l -> l.startsWith(prefix)).toList();
    }
    return lines.stream()
        .filter(l -> !l.startsWith(OP_PREFIX) && !l.startsWith(CALL_PREFIX) && !l.startsWith(FAILED_PREFIX))
        .toList();
  }

  private static boolean isFailure(String line) {
    return line != null && line.startsWith(FAILED_PREFIX);
  }

  /** Where a line is, in words: "operation #3 (step 1)", "NCCL call #2 of the schedule (step 1)". */
  private static String position(String a, String b) {
    if (isFailure(a) || isFailure(b)) {
      return "the build itself";
    }
    String line = a != null ? a : b;
    if (line.startsWith(OP_PREFIX)) {
      return "operation #" + number(line, OP_PREFIX) + step(line);
    }
    if (line.startsWith(CALL_PREFIX)) {
      return "NCCL call #" + number(line, CALL_PREFIX) + " of the built schedule" + step(line);
    }
    return "the plan itself";
  }

  private static String number(String line, String prefix) {
    int colon = line.indexOf(':');
    return colon > prefix.length() ? line.substring(prefix.length(), colon) : "?";
  }

  private static String step(String line) {
    int at = line.indexOf(": step ");
    if (at < 0) {
      return "";
    }
    int end = line.indexOf(' ', at + 7);
    return " (step " + line.substring(at + 7, end < 0 ? line.length() : end) + ")";
  }

  /** One side as written: the line without its "op 3: " label, or what is there instead of it (null: nothing). */
  private static String side(String line, List<String> lines, String section) {
    if (line == null && section.equals(FAILED_PREFIX)) {
      return "(built without error)";
    }
    if (line == null) {
      long ops = lines.stream().filter(l -> l.startsWith(OP_PREFIX)).count();
      long calls = lines.stream().filter(l -> l.startsWith(CALL_PREFIX)).count();
      return "(nothing: its plan has " + ops + (ops == 1 ? " operation" : " operations") + " and " + calls
          + (calls == 1 ? " NCCL call)" : " NCCL calls)");
    }
    if (line.startsWith(OP_PREFIX) || line.startsWith(CALL_PREFIX)) {
      int colon = line.indexOf(": ");
      return colon < 0 ? line : line.substring(colon + 2);
    }
    return line;
  }

  private static String ranksText(List<Integer> ranks) {
    if (ranks.size() == 1) {
      return "rank " + ranks.getFirst();
    }
    if (ranks.size() > 16) {
      return "ranks " + ranks.subList(0, 16).toString().replace("]", ", ... (" + ranks.size() + " in all)]");
    }
    return "ranks " + ranks;
  }

  @Override
  public String toString() {
    return "PlanFingerprint[" + planName + ", " + lines.size() + " lines, sha256 " + hex() + "]";
  }
}
