package dev.commplan.processor.shape;

import java.util.List;

/** Renders shapes the way they are written in source, for messages and generated code. */
public final class ShapeText {
  private ShapeText() {}

  /** {@code {"4", "hidden"}}: the entries as an annotation array. */
  public static String braces(List<String> entries) {
    StringBuilder sb = new StringBuilder("{");
    for (int i = 0; i < entries.size(); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append('"');
      for (char c : entries.get(i).toCharArray()) {
        if (c == '"' || c == '\\') {
          sb.append('\\');
        }
        sb.append(c);
      }
      sb.append('"');
    }
    return sb.append('}').toString();
  }
}
