package dev.commplan.doctor;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Writes what {@link Json} reads, for tests that change a record and read it again. */
final class JsonText {
  private JsonText() {}

  static String of(Object v) {
    if (v == null) {
      return "null";
    }
    if (v instanceof String s) {
      StringBuilder b = new StringBuilder("\"");
      for (char c : s.toCharArray()) {
        b.append(c == '"' || c == '\\' ? "\\" + c : c < 0x20 ? String.format("\\u%04x", (int) c) : String.valueOf(c));
      }
      return b.append('"').toString();
    }
    if (v instanceof Map<?, ?> m) {
      return m.entrySet().stream().map(e -> of(e.getKey()) + ": " + of(e.getValue()))
          .collect(Collectors.joining(", ", "{", "}"));
    }
    if (v instanceof List<?> l) {
      return l.stream().map(JsonText::of).collect(Collectors.joining(", ", "[", "]"));
    }
    return v.toString();
  }
}
