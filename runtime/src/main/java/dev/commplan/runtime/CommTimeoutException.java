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

  private final String planName;
  private final int step;
  private final String collective;
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<String> fields;
  private final int rank;
  private final Duration timeout;
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<Integer> missingRanks;
  private final String summary;
  private final String flightRecord;

  /**
   * @param summary the message without the flight record: what timed out, on which rank, after how long
   * @param planName the plan, null for a collective called directly or when unknown
   * @param step the step number, -1 when none
   * @param collective the collective with its arguments ({@code all-reduce F32 SUM, count 16}), or a
   *     description of the pending work when it is not a collective
   * @param fields the plan fields of the call; empty when none
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

  /** The same timeout, thrown again on another thread (so its stack is that thread's), caused by it. */
  public CommTimeoutException(CommTimeoutException original) {
    this(original.summary, original.planName, original.step, original.collective, original.fields,
        original.rank, original.timeout, original.missingRanks, original.flightRecord, original);
  }

  /** The plan of the operation that timed out, or null when it was called directly. */
  public String planName() {
    return planName;
  }

  /** The step number, or -1. */
  public int step() {
    return step;
  }

  /** The collective with its arguments: {@code all-reduce F32 SUM, count 16}. */
  public String collective() {
    return collective;
  }

  /** The plan fields of the call; empty outside a plan. */
  public List<String> fields() {
    return fields;
  }

  /** The rank that timed out. */
  public int rank() {
    return rank;
  }

  /** The timeout that passed. */
  public Duration timeout() {
    return timeout;
  }

  /** The ranks that did not get there, when the backend knows (local backend); else empty. */
  public List<Integer> missingRanks() {
    return missingRanks;
  }

  /** The message without the flight record. */
  public String summary() {
    return summary;
  }

  /** The rank's flight record (its last operations, most recent last), or null. */
  public String flightRecord() {
    return flightRecord;
  }
}
