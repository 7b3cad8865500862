package dev.commplan.doctor;

/**
 * Input the doctor cannot read: a file that is not a flight record of this version, or a folder that is not
 * one run's records. The message is the one line the command prints (exit status 2), naming the file or
 * folder; never a stack trace.
 */
final class BadInputException extends Exception {
  private static final long serialVersionUID = 1L;

  BadInputException(String line) {
    super(line);
  }
}
