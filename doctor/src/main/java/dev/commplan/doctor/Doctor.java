package dev.commplan.doctor;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CommPlan doctor: {@code java -jar commplan-doctor.jar [--html OUT] [--late-ms MS] DIR} reads every
 * rank's flight record in {@code DIR} and prints, per group, the last operation every rank completed, the
 * first operation where the ranks' calls differ, the ranks that never entered an operation their peers
 * entered, and each rank's lateness at collectives, slowest first. With {@code --html OUT} it also writes the
 * same as one self-contained page with a timeline row per rank.
 *
 * <p>Exit status: 0 when it finds nothing wrong, 1 when it finds a problem, 2 when the input cannot be read
 * (one line on standard error names the file or folder and what is wrong with it), 3 for a bug in the
 * doctor itself. docs/doctor.md shows how to use it; docs/flight-records.md defines the files.
 */
public final class Doctor {
  /** Nothing wrong found. */
  static final int OK = 0;
  /** A problem found. */
  static final int PROBLEMS = 1;
  /** The input could not be read, or the command line is wrong. */
  static final int BAD_INPUT = 2;
  /** A bug in the doctor. */
  static final int BUG = 3;

  /** A rank the others waited for this long, at the median of the collectives, counts as a problem. */
  static final long DEFAULT_LATE_MS = 10;

  static final String USAGE = "usage: java -jar commplan-doctor.jar [--html OUT] [--late-ms MS] DIR";

  private Doctor() {}

  /**
   * Runs the doctor and exits with its status.
   *
   * @param args {@code [--html OUT] [--late-ms MS] DIR}
   */
  public static void main(String[] args) {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    PrintStream err = new PrintStream(System.err, true, StandardCharsets.UTF_8);
    System.exit(run(args, out, err));
  }

  /**
   * The command, without exiting: for programs and tests that run the doctor as a library (the runtime's tests
   * run it on the records their scenarios wrote).
   *
   * @param args {@code [--html OUT] [--late-ms MS] DIR}, as on the command line
   * @param out where the report goes
   * @param err where a line about unreadable input, or a bug, goes
   * @return the exit status the command would have: 0 nothing wrong, 1 a problem found, 2 unreadable input or a
   *     wrong command line, 3 a bug in the doctor
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    try {
      return diagnose(args, out, err);
    } catch (BadInputException e) {
      err.println("commplan-doctor: " + e.getMessage());
      return BAD_INPUT;
    } catch (RuntimeException | Error e) {
      StackTraceElement[] at = e.getStackTrace();
      err.println("commplan-doctor: internal error (a bug in the doctor; please report it with the files): " + e
          + (at.length > 0 ? " at " + at[0] : ""));
      return BUG;
    }
  }

  private static int diagnose(String[] args, PrintStream out, PrintStream err) throws BadInputException {
    Path folder = null;
    Path html = null;
    long lateMs = DEFAULT_LATE_MS;
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      switch (a) {
        case "-h", "--help" -> {
          out.println(USAGE);
          out.println("Reads every rank's flight record (*.json) in DIR; exit 0: nothing wrong, 1: a problem found,"
              + " 2: unreadable input. --html OUT also writes the report as one HTML page; --late-ms MS: a rank the"
              + " others waited for at least MS ms (median) is a problem (default " + DEFAULT_LATE_MS + ").");
          return OK;
        }
        case "--html" -> html = Path.of(value(args, ++i, a));
        case "--late-ms" -> lateMs = milliseconds(value(args, ++i, a));
        default -> {
          if (a.startsWith("-") && a.length() > 1) {
            throw new BadInputException("unknown option " + a + " (" + USAGE + ")");
          }
          if (folder != null) {
            throw new BadInputException("one folder only, given " + folder + " and " + a + " (" + USAGE + ")");
          }
          folder = Path.of(a);
        }
      }
    }
    if (folder == null) {
      throw new BadInputException("no folder given (" + USAGE + ")");
    }
    Diagnosis diagnosis = Diagnosis.of(RecordFolder.read(folder), lateMs * 1_000_000);
    out.print(TextReport.render(diagnosis));
    out.flush();
    if (html != null) {
      try {
        Files.writeString(html, HtmlReport.render(diagnosis), StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new BadInputException(html + ": cannot write the page: " + e);
      }
      err.println("commplan-doctor: wrote " + html);
    }
    return diagnosis.problems().isEmpty() ? OK : PROBLEMS;
  }

  private static String value(String[] args, int i, String option) throws BadInputException {
    if (i >= args.length) {
      throw new BadInputException(option + " needs a value (" + USAGE + ")");
    }
    return args[i];
  }

  private static long milliseconds(String s) throws BadInputException {
    try {
      long v = Long.parseLong(s);
      if (v >= 0) {
        return v;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new BadInputException("--late-ms takes a whole number of milliseconds, 0 or more, not " + s);
  }
}
