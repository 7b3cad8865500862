package dev.commplan.runtime.rules;

import dev.commplan.model.Collective;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;

/**
 * What a {@link CallRules} message is about, and which exception reports a violation: a collective called
 * directly on a communicator ({@link Direct}, here), or one a plan declares and a buffer bound to a plan's
 * field (the plan package's subjects). The rule writes the sentence; the subject names its parts ("send"
 * or {@code 'grads'}, with the shape where there is one). Only a violation calls these methods, so a direct
 * call that passes allocates nothing.
 */
public interface RuleSubject {
  /** A collective's two sides. */
  enum Side {
    SEND,
    RECV
  }

  /** How the message starts, after the rule's tag: {@code all-gather on rank 1}. */
  String where(Collective collective, Communicator comm);

  /** A side as the subject of a sentence: {@code send}, {@code 'grads'}. */
  String ref(Side side);

  /** What uses the communicator, as in "not to this plan's": {@code plan}, {@code call}. */
  String user();

  /** Which communicator to allocate on instead: {@code the communicator the plan is built for}. */
  String communicator();

  /** The exception that reports {@code rule} to this subject's caller, with {@code message}. */
  RuntimeException reject(RuleId rule, String message);

  /** A subject with two sides: a collective's send and receive buffers. */
  interface CallSubject extends RuleSubject {
    /** A side inside {@code count(...)}: {@code send}, {@code grads}. */
    String name(Side side);

    /** A side's size: {@code send has 4 elements}, {@code count(grads) = 4 (shape {"n"})}. */
    String size(Side side, long count);

    /** Both sides, as the subject of "overlap". */
    String sides();

    /**
     * Whether send and receive buffers in NCCL's in-place arrangement are in place (a direct call), or
     * whether in place is declared (a plan: one field) and any overlap of two fields is a violation.
     */
    boolean inPlaceByArrangement();

    /** How to fix overlapping sides. */
    String overlapFix(Collective collective, Communicator comm, Buffer send, Buffer recv);

    /** What "ranks" is in a count rule here: {@code ranks}, or the axis a declared call runs over ({@code tp}). */
    default String ranksName() {
      return "ranks";
    }

    /** The group's size as a message states it: {@code ranks = 4}, {@code tp = 2 (the size of axis "tp" ...)}. */
    default String ranks(int size) {
      return ranksName().equals("ranks") ? "ranks = " + size
          : ranksName() + " = " + size + " (the size of axis \"" + ranksName() + "\" the call runs over)";
    }
  }

  /** A collective called on a communicator ({@code Communicator.allGather} and the others). */
  enum Direct implements CallSubject {
    CALL;

    @Override
    public String where(Collective collective, Communicator comm) {
      return collective.label() + " on rank " + comm.rank();
    }

    @Override
    public String ref(Side side) {
      return name(side);
    }

    @Override
    public String user() {
      return "call";
    }

    @Override
    public String communicator() {
      return "the communicator the call is made on";
    }

    @Override
    public String name(Side side) {
      return side == Side.SEND ? "send" : "recv";
    }

    @Override
    public String size(Side side, long count) {
      return name(side) + " has " + count + " elements";
    }

    @Override
    public String sides() {
      return "send and recv";
    }

    @Override
    public boolean inPlaceByArrangement() {
      return true;
    }

    @Override
    public String overlapFix(Collective collective, Communicator comm, Buffer send, Buffer recv) {
      return "pass disjoint buffers, or NCCL's in-place arrangement: "
          + CallRules.inPlaceArrangement(collective, send, recv, comm.rank());
    }

    /** A root out of range and AVG on fp8 are bad arguments; everything else is a bad buffer. */
    @Override
    public RuntimeException reject(RuleId rule, String message) {
      return rule == RuleId.BAD_ROOT || rule == RuleId.FP8_AVERAGE
          ? new IllegalArgumentException(message) : new BufferBindingException(message);
    }
  }
}
