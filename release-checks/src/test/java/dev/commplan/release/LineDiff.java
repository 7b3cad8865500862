package dev.commplan.release;

import java.util.ArrayList;
import java.util.List;

/**
 * The lines two texts do not share, in order ({@code -} only in the first, {@code +} only in the second),
 * each change under the last unindented line before it (in an API file: the type it belongs to).
 */
final class LineDiff {
  private LineDiff() {}

  static String of(String before, String after) {
    List<String> a = before.lines().toList();
    List<String> b = after.lines().toList();
    // longest common subsequence, from the ends
    int[][] common = new int[a.size() + 1][b.size() + 1];
    for (int i = a.size() - 1; i >= 0; i--) {
      for (int j = b.size() - 1; j >= 0; j--) {
        common[i][j] = a.get(i).equals(b.get(j)) ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
      }
    }
    List<String> out = new ArrayList<>();
    String context = null;
    String printedContext = null;
    int i = 0;
    int j = 0;
    while (i < a.size() || j < b.size()) {
      if (i < a.size() && j < b.size() && a.get(i).equals(b.get(j))) {
        context = heading(a.get(i), context);
        i++;
        j++;
        continue;
      }
      String line;
      if (j >= b.size() || i < a.size() && common[i + 1][j] >= common[i][j + 1]) {
        line = "- " + a.get(i++);
      } else {
        line = "+ " + b.get(j++);
      }
      String text = line.substring(2);
      if (text.startsWith(" ") && context != null && !context.equals(printedContext)) {
        out.add("  " + context);
        printedContext = context;
      } else if (heading(text, null) != null) {
        context = text;
        printedContext = text;
      }
      out.add(line);
    }
    return String.join("\n", out) + "\n";
  }

  private static String heading(String line, String previous) {
    return !line.isEmpty() && !line.startsWith(" ") && !line.startsWith("#") ? line : previous;
  }
}
