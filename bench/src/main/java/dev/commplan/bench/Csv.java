package dev.commplan.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** A CSV file written row by row and flushed each time, so that a long run that dies keeps what it measured. */
final class Csv implements AutoCloseable {
  private final BufferedWriter writer;

  Csv(Path path) {
    try {
      Path parent = path.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      writer = Files.newBufferedWriter(path, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + path, e);
    }
  }

  /** Opens {@code path}, or returns null where no path was given. */
  static Csv openOrNull(String path) {
    return path == null ? null : new Csv(Path.of(path));
  }

  synchronized void header(String header) {
    line(header);
  }

  synchronized void row(List<?> cells) {
    line(cells.stream().map(Csv::cell).collect(Collectors.joining(",")));
  }

  private void line(String line) {
    try {
      writer.write(line);
      writer.newLine();
      writer.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String cell(Object v) {
    if (v instanceof Double d) {
      return String.format(Locale.ROOT, "%.6g", d);
    }
    String s = String.valueOf(v);
    return s.contains(",") || s.contains("\"") ? '"' + s.replace("\"", "\"\"") + '"' : s;
  }

  /** Reads a CSV written by this class (quoted cells included) into rows of cells, header first. */
  static List<List<String>> read(Path path) {
    List<List<String>> rows = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(path, StandardCharsets.UTF_8)) {
        if (line.isBlank()) {
          continue;
        }
        List<String> cells = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
          char c = line.charAt(i);
          if (quoted) {
            if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
              cur.append('"');
              i++;
            } else if (c == '"') {
              quoted = false;
            } else {
              cur.append(c);
            }
          } else if (c == '"') {
            quoted = true;
          } else if (c == ',') {
            cells.add(cur.toString());
            cur.setLength(0);
          } else {
            cur.append(c);
          }
        }
        cells.add(cur.toString());
        rows.add(cells);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + path, e);
    }
    return rows;
  }

  @Override
  public synchronized void close() {
    try {
      writer.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
