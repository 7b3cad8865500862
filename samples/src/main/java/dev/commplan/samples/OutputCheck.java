package dev.commplan.samples;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Whether a file can be written, asked before a long run that writes it at the end. Public because the
 * bench compiles this one file in too (bench/pom.xml), as it does the samples' launcher: the bench and
 * the samples depend on neither each other nor anything else that could hold it.
 */
public final class OutputCheck {
  private OutputCheck() {}

  /**
   * Null where {@code file} can be written (its folder is created, as the writer would; a file that did not
   * exist is created and deleted again), else why not, in a few words.
   */
  public static String whyNotWritable(Path file) {
    try {
      Path absolute = file.toAbsolutePath();
      if (Files.isDirectory(absolute)) {
        return "it is a folder";
      }
      Path parent = absolute.getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      if (Files.exists(absolute)) {
        return Files.isWritable(absolute) ? null : "permission denied";
      }
      Files.delete(Files.createFile(absolute));
      return null;
    } catch (IOException | SecurityException e) {
      return reason(e);
    }
  }

  /** An I/O failure in a few words: "permission denied", "no such file or folder: /x", or the system's reason. */
  public static String reason(Throwable e) {
    if (e instanceof AccessDeniedException a) {
      return "permission denied" + (a.getFile() != null ? " (" + a.getFile() + ")" : "");
    }
    if (e instanceof NoSuchFileException n) {
      return "no such file or folder" + (n.getFile() != null ? ": " + n.getFile() : "");
    }
    if (e instanceof FileSystemException f && f.getReason() != null) {
      return f.getReason() + (f.getFile() != null ? " (" + f.getFile() + ")" : "");
    }
    return e == null ? "unknown reason" : String.valueOf(e.getMessage() != null ? e.getMessage() : e);
  }
}
