package dev.commplan.runtime;

import java.time.Duration;
import java.util.List;

/**
 * A rank waited longer than its communicator's timeout ({@link CommOptions#timeout()}) for work that
 * needs its peers. Names the plan, step, collective and fields of the operation it was waiting on (or
 * says it was called directly), the rank, the timeout, the ranks that did and did not get there where
 * the backend knows, and carries the rank's flight record (its last operations). The communicator was
 * aborted: every other rank fails too, with this exception or with {@link RankAbortedException} caused
 * by it; make a new cluster or communicator.
 */
public class CommTimeoutException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /** The plan, or null ({@link #planName()}). */
  private final String planName;
  /** The step number, or -1 ({@link #step()}). */
  private final int step;
  /** The collective with its arguments ({@link #collective()}). */
  private final String collective;
  /** The plan fields of the call ({@link #fields()}). */
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<String> fields;
  /** The rank that timed out ({@link #rank()}). */
  private final int rank;
  /** The timeout that passed ({@link #timeout()}). */
  private final Duration timeout;
  /** The ranks that did not arrive, where known ({@link #missingRanks()}). */
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<Integer> missingRanks;
  /** The message without the flight record ({@link #summary()}). */
  private final String summary;
  /** The rank's flight record, or null ({@link #flightRecord()}). */
  private final String flightRecord;

  /**
   * Creates the exception; backends throw it on the rank that waited, and the message is {@code summary}
   * followed by {@code flightRecord}.
   *
   * @param summary the message without the flight record: what timed out, on which rank, after how long
   * @param planName the plan, null for a collective called directly or when unknown
   * @param step the step number, -1 when none
   * @param collective the collective with its arguments ({@code all-reduce F32 SUM, count 16}), or a
   *     description of the pending work when it is not a collective
   * @param fields the plan fields of the call; empty when none
   * @param rank the rank that timed out
   * @param timeout the timeout that passed ({@link CommOptions#timeout()})
   * @param missingRanks the ranks that did not arrive, when the backend knows; else empty
   * @param flightRecord this rank's flight record as text ({@code FlightRecorder.format()}), or null
   * @param cause the underlying failure, or null
   */
  public CommTimeoutException(String summary, String planName, int step, String collective,
      List<String> fields, int rank, Duration timeout, List<Integer> missingRanks, String flightRecord,
      Throwable cause) {
    super(flightRecord == null ? summary : summary + "\n" + flightRecord, cause);
    this.summary = summary;
    this.planName = planName;
    this.step = step;
    this.collective = collective;
    this.fields = List.copyOf(fields);
    this.rank = rank;
    this.timeout = timeout;
    this.missingRanks = List.copyOf(missingRanks);
    this.flightRecord = flightRecord;
  }

  /**
   * The same timeout, thrown again on another thread (so its stack is that thread's), caused by it.
   *
   * @param original the exception thrown on the rank's own thread; it becomes the cause
   */
  public CommTimeoutException(CommTimeoutException original) {
    this(original.summary, original.planName, original.step, original.collective, original.fields,
        original.rank, original.timeout, original.missingRanks, original.flightRecord, original);
  }

  /** {@return the plan of the operation that timed out, or null when it was called directly} */
  public String planName() {
    return planName;
  }

  /** {@return the step number, or -1} */
  public int step() {
    return step;
  }

  /** {@return the collective with its arguments: {@code all-reduce F32 SUM, count 16}} */
  public String collective() {
    return collective;
  }

  /** {@return the plan fields of the call; empty outside a plan} */
  public List<String> fields() {
    return fields;
  }

  /** {@return the rank that timed out} */
  public int rank() {
    return rank;
  }

  /** {@return the timeout that passed} */
  public Duration timeout() {
    return timeout;
  }

  /** {@return the ranks that did not get there, when the backend knows (local backend); else empty} */
  public List<Integer> missingRanks() {
    return missingRanks;
  }

  /** {@return the message without the flight record} */
  public String summary() {
    return summary;
  }

  /** {@return the rank's flight record (its last operations, most recent last), or null} */
  public String flightRecord() {
    return flightRecord;
  }
}
