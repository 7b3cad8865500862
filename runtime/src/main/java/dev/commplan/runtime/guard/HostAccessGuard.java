package dev.commplan.runtime.guard;

import java.util.Locale;

/**
 * A buffer's host-access guard: which plan work in flight writes it and which reads it, so that host
 * access that would race with that work throws {@code BufferInFlightException} instead of reading stale
 * data (the classic bug of reading NCCL results before synchronizing) or changing what is being sent.
 * The buffer asks ({@link #pendingWriter()}, {@link #pendingReader()}) and builds the exception.
 *
 * <ul>
 *   <li>A host <em>read</em> ({@code get}, {@code copyTo}, {@code toArray}, ...) is refused while work
 *       that writes the buffer (a receive side, or an in-place buffer) may still run.
 *   <li>A host <em>write</em> ({@code set}, {@code copyFrom}, {@code fill}, ...) is refused while work
 *       that reads or writes it (a send side too) may still run.
 * </ul>
 *
 * <p>Work counts as finished once a {@code synchronize()} of its stream that began after it was enqueued
 * has returned normally ({@link StreamProgress}). Each buffer owns one guard ({@code Buffer.hostAccessGuard()});
 * plans mark it when they enqueue ({@code PlanBuilder.hostAccessGuard}, on by default). The check costs
 * a few field loads and a volatile read per host access.
 *
 * <p>Marking is paid once, not per execute: a guard points at the step's {@link InFlightWork}, whose
 * ticket each enqueue updates, so re-marking the same buffers with the same marker changes nothing. A
 * step therefore marks its buffers only while {@link InFlightWork#marksInPlace()} is false: when it
 * first runs, and after another plan or step marked one of them (which {@code markWritten} and {@code
 * markRead} tell the marker they replace). On an H200 host, marking 400 buffers every execute cost
 * about 2 µs, as much as NCCL's own launch (docs/perf/history.md, 2026-12-02). Buffers are used by one thread at a time
 * (their communicator's), like the communicator.
 */
public final class HostAccessGuard {
  /**
   * The system property that sets whether plans guard their buffers ({@code true}, the default, or
   * {@code false}); {@code PlanBuilder.HOST_ACCESS_GUARD_PROPERTY} is the same name.
   */
  public static final String PROPERTY = "commplan.hostAccessGuard";

  /**
   * Whether plans guard their buffers unless told otherwise: the system property {@value #PROPERTY}, {@code
   * true} when unset; read on each call.
   *
   * @throws IllegalArgumentException if the property is set to something other than true or false
   */
  public static boolean defaultEnabled() {
    String value = System.getProperty(PROPERTY);
    if (value == null || value.isBlank()) {
      return true;
    }
    return switch (value.strip().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(
          "system property " + PROPERTY + " is '" + value + "'; set it to true or false");
    };
  }

  private InFlightWork writer;
  private String writerField;
  private InFlightWork reader;
  private String readerField;

  /** Records that {@code work} (now enqueued) writes the buffer, which is its field {@code field}. */
  public void markWritten(InFlightWork work, String field) {
    InFlightWork previous = writer;
    if (previous != work) {
      if (previous != null) {
        previous.markOverwritten(); // its next enqueue must mark its buffers again
      }
      writer = work;
    }
    writerField = field;
  }

  /** Records that {@code work} (now enqueued) reads the buffer, which is its field {@code field}. */
  public void markRead(InFlightWork work, String field) {
    InFlightWork previous = reader;
    if (previous != work) {
      if (previous != null) {
        previous.markOverwritten();
      }
      reader = work;
    }
    readerField = field;
  }

  /** Whether work that writes or reads the buffer may still be running. */
  public boolean isInFlight() {
    InFlightWork w = writer;
    InFlightWork r = reader;
    return (w != null && w.isPending()) || (r != null && r.isPending());
  }

  /** The work that may still write the buffer, so that a host read must wait; null if none. */
  public InFlightWork pendingWriter() {
    InFlightWork w = writer;
    return w != null && w.isPending() ? w : null;
  }

  /** The field {@link #pendingWriter()} knows the buffer as. */
  public String writerField() {
    return writerField;
  }

  /** The work that may still read (and not write) the buffer, so that a host write must wait; null if none. */
  public InFlightWork pendingReader() {
    InFlightWork r = reader;
    return r != null && r.isPending() ? r : null;
  }

  /** The field {@link #pendingReader()} knows the buffer as. */
  public String readerField() {
    return readerField;
  }
}
