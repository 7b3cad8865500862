package dev.commplan.model;

/**
 * The peer of a point-to-point transfer ({@code @Send(to = ...)}, {@code @Recv(from = ...)}), as the DSL
 * contract writes it: {@code rank + k} or {@code rank - k} ({@code k} an integer literal ≥ 0, spaces
 * allowed), or either wrapped as {@code (rank + k) % ranks} / {@code (rank - k) % ranks}.
 *
 * <p>Wrapped, the peer is taken modulo the ranks and always lies in {@code [0, ranks)} ({@code (rank - 1)
 * % ranks} on rank 0 is {@code ranks - 1}, not Java's -1). Unwrapped, a peer outside {@code [0, ranks)}
 * means no transfer on that rank: the first stage of a pipeline receives from no one, the last sends to
 * no one ({@link #resolve} returns -1).
 *
 * <p>A send to {@code P} is matched by a receive from {@link #inverse() P's inverse} on the peer: {@code
 * rank + k} ↔ {@code rank - k}, wrapped or not alike. Two peers are equal when they name the same rank
 * on every rank ({@code rank + 0} equals {@code rank - 0}); {@link #toString()} is the canonical text,
 * with the sign as written.
 */
public final class Peer {
  private static final String GRAMMAR =
      "a peer is rank + k, rank - k, (rank + k) % ranks or (rank - k) % ranks, with k an integer literal >= 0";

  private final int k;
  private final boolean minus;
  private final boolean wrapped;

  private Peer(int k, boolean minus, boolean wrapped) {
    if (k < 0) {
      throw new IllegalArgumentException("k must be >= 0, was " + k + "; " + GRAMMAR);
    }
    this.k = k;
    this.minus = minus;
    this.wrapped = wrapped;
  }

  /**
   * {@code rank + k}, unwrapped.
   *
   * @param k the distance, at least 0
   * @return the peer
   */
  public static Peer plus(int k) {
    return new Peer(k, false, false);
  }

  /**
   * {@code rank - k}, unwrapped.
   *
   * @param k the distance, at least 0
   * @return the peer
   */
  public static Peer minus(int k) {
    return new Peer(k, true, false);
  }

  /**
   * The peer {@code rank + offset} (a negative offset is written {@code rank - |offset|}), wrapped modulo
   * the ranks or not: what generated code passes when it has the peer as numbers.
   *
   * @param offset the signed offset from this rank
   * @param wrapped whether the peer is taken modulo the ranks
   * @return the peer
   */
  public static Peer of(int offset, boolean wrapped) {
    if (offset == Integer.MIN_VALUE) {
      throw new IllegalArgumentException("offset " + offset + " is out of range; " + GRAMMAR);
    }
    return new Peer(Math.abs(offset), offset < 0, wrapped);
  }

  /** {@return this peer wrapped: {@code (rank + k) % ranks}} */
  public Peer wrap() {
    return new Peer(k, minus, true);
  }

  /**
   * Parses {@code text}.
   *
   * @param text the peer as written in {@code @Send(to)} or {@code @Recv(from)}: {@code "rank + 1"},
   *     {@code "(rank - 1) % ranks"}
   * @return the peer
   * @throws IllegalArgumentException naming the text, what is wrong with it and the grammar
   */
  public static Peer parse(String text) {
    if (text == null) {
      throw new IllegalArgumentException("no peer given; " + GRAMMAR);
    }
    String s = text.strip();
    boolean wrapped = false;
    if (s.startsWith("(")) {
      int close = s.indexOf(')');
      if (close < 0) {
        throw bad(text, "'(' without ')'");
      }
      String rest = s.substring(close + 1).strip();
      if (!rest.startsWith("%")) {
        throw bad(text, rest.isEmpty() ? "the parentheses must be followed by % ranks"
            : "after ')' comes '% ranks', not '" + rest + "'");
      }
      if (!rest.substring(1).strip().equals("ranks")) {
        throw bad(text, "a wrapped peer is taken % ranks (the built-in name), not % " + rest.substring(1).strip());
      }
      wrapped = true;
      s = s.substring(1, close).strip();
    } else if (s.contains("%")) {
      throw bad(text, "to wrap a peer, parenthesize it: (rank + k) % ranks");
    }
    if (!s.startsWith("rank")) {
      throw bad(text, "a peer starts with 'rank'");
    }
    String rest = s.substring("rank".length()).strip();
    if (rest.isEmpty()) {
      throw bad(text, "write 'rank + 0' for this rank itself, or add + k or - k");
    }
    char sign = rest.charAt(0);
    if (sign != '+' && sign != '-') {
      throw bad(text, "'rank' is followed by + k or - k, not '" + rest + "'");
    }
    String digits = rest.substring(1).strip();
    if (digits.isEmpty()) {
      throw bad(text, "k is missing after '" + sign + "'");
    }
    for (int i = 0; i < digits.length(); i++) {
      if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
        throw bad(text, "k must be an integer literal >= 0, not '" + digits + "'");
      }
    }
    if (digits.length() > 1 && digits.charAt(0) == '0') {
      throw bad(text, "k is written without leading zeros ('" + digits + "')");
    }
    int k;
    try {
      k = Integer.parseInt(digits);
    } catch (NumberFormatException e) {
      throw bad(text, "k = " + digits + " is larger than an int (" + Integer.MAX_VALUE + ")");
    }
    return new Peer(k, sign == '-', wrapped);
  }

  private static IllegalArgumentException bad(String text, String what) {
    return new IllegalArgumentException("'" + text + "' is not a peer: " + what + "; " + GRAMMAR);
  }

  /** {@return {@code k}: how far the peer is from this rank} */
  public int distance() {
    return k;
  }

  /** {@return the signed offset: {@code k} for {@code rank + k}, {@code -k} for {@code rank - k}} */
  public int offset() {
    return minus ? -k : k;
  }

  /** {@return whether the peer is taken modulo the ranks ({@code (rank ± k) % ranks})} */
  public boolean wrapped() {
    return wrapped;
  }

  /**
   * The peer of {@code rank} on {@code ranks} ranks: wrapped, {@code (rank + offset) mod ranks}, always in
   * {@code [0, ranks)}; unwrapped, {@code rank + offset} if that is in {@code [0, ranks)}, else -1 (no
   * transfer on this rank).
   *
   * @param rank this rank, in {@code [0, ranks)}
   * @param ranks the number of ranks, positive
   * @return the peer's rank, or -1 for no transfer on this rank
   */
  public int resolve(int rank, int ranks) {
    if (ranks <= 0 || rank < 0 || rank >= ranks) {
      throw new IllegalArgumentException("rank " + rank + " of " + ranks + " ranks");
    }
    long peer = (long) rank + offset();
    if (wrapped) {
      return (int) Math.floorMod(peer, (long) ranks);
    }
    return peer >= 0 && peer < ranks ? (int) peer : -1;
  }

  /**
   * {@return the peer that a transfer to this one is received from: {@code rank + k} ↔ {@code rank - k}, wrappedness kept}
   */
  public Peer inverse() {
    return new Peer(k, !minus, wrapped);
  }

  /** Equal when both name the same rank on every rank: same offset (so {@code rank + 0} is {@code rank - 0}) and wrappedness. */
  @Override
  public boolean equals(Object o) {
    return o instanceof Peer p && p.offset() == offset() && p.wrapped == wrapped;
  }

  @Override
  public int hashCode() {
    return offset() * 31 + (wrapped ? 1 : 0);
  }

  /** The canonical text: {@code rank + 1}, {@code (rank - 1) % ranks}. */
  @Override
  public String toString() {
    String inner = "rank " + (minus ? "- " : "+ ") + k;
    return wrapped ? "(" + inner + ") % ranks" : inner;
  }
}
