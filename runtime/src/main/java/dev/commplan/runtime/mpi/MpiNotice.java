package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;

/**
 * What one rank of an MPI family tells every other rank ({@link MpiFamily}): its kind (it failed, timed
 * out, gave up, or is closing the world), the sender's world and group rank, its group's label, whether it
 * was closing that group ({@code closing}: waiting at the world's close barrier, or in the comparison of the
 * last calls that a close makes, so it has left its calls there), and a sentence.
 *
 * <p>On the wire ({@link #writeTo}, {@link #readFrom}) a notice is a header of six ints (kind, world rank,
 * group rank, closing, the label's bytes, the text's bytes), then the label and the text in UTF-8: at most
 * {@link #MAX_BYTES} in all, the label cut to 256 bytes and the text to what is left.
 *
 * @param kind {@link #FAILED}, {@link #TIMED_OUT}, {@link #GAVE_UP} or {@link #LEFT}
 * @param worldRank the sender's rank in the world
 * @param groupRank the sender's rank in its group
 * @param group its group's label ({@code world}, or for instance {@code axis tp of mesh [dp=2, tp=4]})
 * @param closing whether it was closing {@code group}
 * @param text what it said
 */
record MpiNotice(int kind, int worldRank, int groupRank, String group, boolean closing, String text) {
  /** A notice's kind: the sender's call failed (an MPI error, or CommPlan's own check). */
  static final int FAILED = 1;
  /** A notice's kind: the sender waited past its timeout. */
  static final int TIMED_OUT = 2;
  /** A notice's kind: the sender gave up because of another rank's notice. */
  static final int GAVE_UP = 3;
  /**
   * A notice's kind: the sender is closing the world and has waited a second there for the others. Not a
   * failure (a peer still finishing its last call may see it): it ends no wait, but a rank that times out
   * names the ranks that left this way.
   */
  static final int LEFT = 4;

  /** The most bytes a notice takes on the wire: what a receive for one holds. */
  static final int MAX_BYTES = 4096;
  /** The header: kind, world rank, group rank, closing, the label's bytes, the text's bytes. */
  private static final int HEADER_BYTES = 24;
  private static final int MAX_LABEL_BYTES = 256;

  /** {@code rank 2 of axis tp of mesh [dp=2, tp=4] (world rank 6)}, or {@code rank 2 of world}. */
  String who() {
    return group.equals("world") ? "rank " + worldRank + " of world"
        : "rank " + groupRank + " of " + group + " (world rank " + worldRank + ")";
  }

  /** What the sender did, in words: {@code failed}, {@code timed out}, {@code gave up}, {@code is closing world}. */
  String verb() {
    return switch (kind) {
      case FAILED -> "failed";
      case TIMED_OUT -> "timed out";
      case LEFT -> "is closing world";
      default -> "gave up";
    };
  }

  /**
   * {@return whether this notice, of one wait, is the one to name rather than {@code earlier} (or none)}: the
   * first failure or timeout rather than a rank that gave up on it.
   */
  boolean outranks(MpiNotice earlier) {
    return earlier == null || earlier.kind() == GAVE_UP && kind != GAVE_UP;
  }

  /**
   * Writes the notice at the start of {@code out}, cutting the label and the text to fit.
   *
   * @param out at least {@link #MAX_BYTES} long
   * @return the bytes written: what to send
   */
  int writeTo(MemorySegment out) {
    byte[] label = group.getBytes(StandardCharsets.UTF_8);
    byte[] words = text.getBytes(StandardCharsets.UTF_8);
    int labelBytes = Math.min(label.length, MAX_LABEL_BYTES);
    int textBytes = Math.min(words.length, MAX_BYTES - HEADER_BYTES - labelBytes);
    out.set(JAVA_INT, 0, kind);
    out.set(JAVA_INT, 4, worldRank);
    out.set(JAVA_INT, 8, groupRank);
    out.set(JAVA_INT, 12, closing ? 1 : 0);
    out.set(JAVA_INT, 16, labelBytes);
    out.set(JAVA_INT, 20, textBytes);
    MemorySegment.copy(label, 0, out, JAVA_BYTE, HEADER_BYTES, labelBytes);
    MemorySegment.copy(words, 0, out, JAVA_BYTE, HEADER_BYTES + labelBytes, textBytes);
    return HEADER_BYTES + labelBytes + textBytes;
  }

  /**
   * Reads a notice that another rank wrote ({@link #writeTo}); lengths out of range are clamped, so that a
   * damaged notice cannot read past the buffer.
   *
   * @param in the received bytes, {@link #MAX_BYTES} long
   * @return the notice
   */
  static MpiNotice readFrom(MemorySegment in) {
    int kind = in.get(JAVA_INT, 0);
    int from = in.get(JAVA_INT, 4);
    int groupRank = in.get(JAVA_INT, 8);
    boolean closing = in.get(JAVA_INT, 12) != 0;
    int labelBytes = Math.max(0, Math.min(in.get(JAVA_INT, 16), MAX_BYTES - HEADER_BYTES));
    int textBytes = Math.max(0, Math.min(in.get(JAVA_INT, 20), MAX_BYTES - HEADER_BYTES - labelBytes));
    byte[] label = new byte[labelBytes];
    byte[] text = new byte[textBytes];
    MemorySegment.copy(in, JAVA_BYTE, HEADER_BYTES, label, 0, labelBytes);
    MemorySegment.copy(in, JAVA_BYTE, HEADER_BYTES + labelBytes, text, 0, textBytes);
    return new MpiNotice(kind, from, groupRank, new String(label, StandardCharsets.UTF_8), closing,
        new String(text, StandardCharsets.UTF_8));
  }
}
