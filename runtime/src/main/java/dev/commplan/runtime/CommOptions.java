package dev.commplan.runtime;

import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Objects;

/**
 * Options every backend's communicators share: the timeout, whether the agreement check is on, and where the
 * ranks write their flight records when a rank fails.
 *
 * <p><b>Timeout.</b> How long a rank waits for work that needs its peers (a collective, or {@code
 * Stream.synchronize()} on work that makes no progress) before it gives up: it throws {@link
 * CommTimeoutException} naming the plan, step, collective, fields and rank, the communicator (local: the
 * whole cluster) is aborted, and every other rank fails too instead of waiting forever. The default is
 * 5 minutes ({@link #DEFAULT_TIMEOUT}) on every backend, unless the system property {@value #TIMEOUT_PROPERTY}
 * says otherwise (an ISO-8601 duration such as {@code PT30S}, or a number of seconds such as {@code 30}).
 *
 * <p>Why 5 minutes: long enough that no healthy collective comes near it (NCCL's first collective on a
 * new communicator sets up connections and can take seconds; a large all-reduce over a slow network some
 * tens of seconds), short enough that a dead rank costs minutes, not an hour. PyTorch's NCCL default is
 * 10 minutes; we halve it because our timeout counts from when a rank starts waiting for its peers, not
 * from when the host enqueued the work, so it does not include the time a rank spends behind earlier,
 * healthy work. Set it longer when ranks legitimately do long host work (checkpointing, say) while their
 * peers already wait in a collective.
 *
 * <p><b>Agreement check.</b> On by default: the communicator checks, through its own collectives, that its
 * ranks make the same calls (collective, data type, count, op, root, plan, order; sends against receives)
 * and fails every rank with {@link DisagreementException} where they do not (docs/reliability.md,
 * "Agreement check", says when and at what cost). Every rank of a communicator must use the same setting.
 * The system property {@value #AGREEMENT_CHECK_PROPERTY}{@code =false} turns it off by default.
 *
 * <p><b>Flight records on disk.</b> Off by default. With a folder ({@link #withFlightRecordDir}, or the system
 * property {@value #FLIGHT_RECORD_DIR_PROPERTY}), when a rank fails (a timeout, an abort, ranks that disagree, a
 * native error) every rank of the family, those that were only waiting included, writes its flight record
 * there: one JSON file a rank, {@code <job>.rank-<worldRank>.json}, in the format of docs/flight-records.md,
 * which {@code java -jar commplan-doctor.jar DIR} reads (docs/doctor.md). {@link
 * Communicator#dumpFlightRecord} writes one rank's on demand, with or without the folder. Recording costs
 * nothing more with the folder than without: the flight recorders record every operation either way.
 *
 * @param timeout how long a rank waits for its peers; positive
 * @param agreementCheck whether the communicators check that their ranks make the same calls
 * @param flightRecordDir where every rank writes its flight record when a rank fails, or null for nowhere
 */
public record CommOptions(Duration timeout, boolean agreementCheck, Path flightRecordDir) {
  /** The system property that sets the default timeout: {@value}. */
  public static final String TIMEOUT_PROPERTY = "commplan.timeout";

  /** The system property that turns the agreement check off by default: {@value}{@code =false}. */
  public static final String AGREEMENT_CHECK_PROPERTY = "commplan.agreementCheck";

  /**
   * The system property that gives the folder every rank writes its flight record to when a rank fails
   * ({@link #flightRecordDir()}): {@value}.
   */
  public static final String FLIGHT_RECORD_DIR_PROPERTY = "commplan.flightRecordDir";

  /** The built-in default timeout: 5 minutes (see the class comment for why). */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);

  /**
   * Checks the options.
   *
   * @param timeout how long a rank waits for its peers; positive
   * @param agreementCheck whether the communicators check that their ranks make the same calls
   * @param flightRecordDir where every rank writes its flight record when a rank fails, or null for nowhere
   * @throws IllegalArgumentException if {@code timeout} is zero or negative
   */
  public CommOptions {
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("the timeout must be positive, was " + timeout);
    }
  }

  /**
   * Options with {@code timeout} and the agreement check's default (on, unless the system property {@value
   * #AGREEMENT_CHECK_PROPERTY} is {@code false}).
   *
   * @param timeout how long a rank waits for its peers; positive
   * @throws IllegalArgumentException if {@code timeout} is zero or negative
   */
  public CommOptions(Duration timeout) {
    this(timeout, defaultAgreementCheck());
  }

  /**
   * Options with {@code timeout}, the agreement check on or off, and the flight records' folder's default (the
   * system property {@value #FLIGHT_RECORD_DIR_PROPERTY}, or none).
   *
   * @param timeout how long a rank waits for its peers; positive
   * @param agreementCheck whether the communicators check that their ranks make the same calls
   * @throws IllegalArgumentException if {@code timeout} is zero or negative
   */
  public CommOptions(Duration timeout, boolean agreementCheck) {
    this(timeout, agreementCheck, defaultFlightRecordDir());
  }

  /**
   * The defaults: the timeout from the system property {@value #TIMEOUT_PROPERTY} if set, else {@link
   * #DEFAULT_TIMEOUT}; the agreement check on unless {@value #AGREEMENT_CHECK_PROPERTY} is {@code false}; the
   * flight records' folder from {@value #FLIGHT_RECORD_DIR_PROPERTY}, or none.
   *
   * @return the default options
   * @throws IllegalArgumentException if the property is set but is not a positive duration
   */
  public static CommOptions defaults() {
    return new CommOptions(defaultTimeout());
  }

  /**
   * These options with another timeout.
   *
   * @param timeout how long a rank waits for its peers; positive
   * @return new options; this record is unchanged
   */
  public CommOptions withTimeout(Duration timeout) {
    return new CommOptions(timeout, agreementCheck, flightRecordDir);
  }

  /**
   * These options with the agreement check on or off; every rank must choose the same.
   *
   * @param on whether the communicators check that their ranks make the same calls
   * @return new options; this record is unchanged
   */
  public CommOptions withAgreementCheck(boolean on) {
    return new CommOptions(timeout, on, flightRecordDir);
  }

  /**
   * These options with another folder for the flight records (see the class comment): when a rank fails, every
   * rank of the family writes its record there, {@code <job>.rank-<worldRank>.json}, making the folder if needed.
   *
   * @param dir the folder, or null for nowhere
   * @return new options; this record is unchanged
   */
  public CommOptions withFlightRecordDir(Path dir) {
    return new CommOptions(timeout, agreementCheck, dir);
  }

  /**
   * {@return the flight records' folder by default: the system property {@value #FLIGHT_RECORD_DIR_PROPERTY}, or
   * null where it is not set}
   */
  public static Path defaultFlightRecordDir() {
    String dir = System.getProperty(FLIGHT_RECORD_DIR_PROPERTY, "").strip();
    return dir.isEmpty() ? null : Path.of(dir);
  }

  /** {@return whether the agreement check is on by default: unless {@value #AGREEMENT_CHECK_PROPERTY} is {@code false}} */
  public static boolean defaultAgreementCheck() {
    return !"false".equalsIgnoreCase(System.getProperty(AGREEMENT_CHECK_PROPERTY, "").strip());
  }

  /**
   * Options with {@code timeout} and the other defaults.
   *
   * @param timeout how long a rank waits for its peers; positive
   * @return new options
   */
  public static CommOptions timeout(Duration timeout) {
    return new CommOptions(timeout);
  }

  private static Duration defaultTimeout() {
    String text = System.getProperty(TIMEOUT_PROPERTY);
    if (text == null || text.isBlank()) {
      return DEFAULT_TIMEOUT;
    }
    String t = text.strip();
    Duration d;
    try {
      d = t.matches("[0-9]+(\\.[0-9]+)?")
          ? Duration.ofNanos(Math.round(Double.parseDouble(t) * 1e9))
          : Duration.parse(t);
    } catch (DateTimeParseException | ArithmeticException e) {
      throw new IllegalArgumentException("the system property " + TIMEOUT_PROPERTY + " is '" + text
          + "', which is neither an ISO-8601 duration (PT30S) nor a number of seconds (30)", e);
    }
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException("the system property " + TIMEOUT_PROPERTY + " is '" + text
          + "'; the timeout must be positive");
    }
    return d;
  }
}
