package dev.commplan.processor.validation;

import dev.commplan.processor.lang.Identifiers;
import java.util.Collection;

/** Small helpers about Java names and near-misses, for checks and "did you mean" hints. */
public final class JavaNames {
  private JavaNames() {}

  /** See {@link Identifiers#isIdentifier}. */
  public static boolean isIdentifier(String s) {
    return Identifiers.isIdentifier(s);
  }

  /** A valid identifier resembling {@code s}: invalid characters dropped, words joined in camel case. */
  public static String sanitize(String s) {
    return sanitize(s, "dim");
  }

  /**
   * A valid identifier resembling {@code s}, as {@link #sanitize(String)}, with {@code word} ({@code dim},
   * {@code axis}) standing in for or added to what is left when that is not one.
   */
  public static String sanitize(String s, String word) {
    StringBuilder sb = new StringBuilder();
    boolean upper = false;
    for (int c : s.codePoints().toArray()) {
      if (Character.isIdentifierIgnorable(c)) {
        continue; // not there, to javac
      }
      if (Character.isJavaIdentifierPart(c) && c != '$') {
        sb.appendCodePoint(sb.isEmpty() || !upper ? c : Character.toUpperCase(c));
        upper = false;
      } else {
        upper = !sb.isEmpty();
      }
    }
    String out = sb.toString();
    if (out.isEmpty()) {
      return word;
    }
    if (!Character.isJavaIdentifierStart(out.codePointAt(0))) {
      out = word.charAt(0) + out;
    }
    return isIdentifier(out) ? out : out + Character.toUpperCase(word.charAt(0)) + word.substring(1);
  }

  /** The candidate closest to {@code name} if it is a plausible typo (edit distance at most 2), else null. */
  public static String closest(String name, Collection<String> candidates) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String c : candidates) {
      int d = c.equalsIgnoreCase(name) ? 0 : distance(name, c);
      if (d < bestDistance) {
        best = c;
        bestDistance = d;
      }
    }
    int length = name.codePointCount(0, name.length());
    return bestDistance <= Math.min(2, Math.max(1, length / 2)) ? best : null;
  }

  /** Levenshtein distance, in characters (code points). */
  private static int distance(String first, String second) {
    int[] a = first.codePoints().toArray();
    int[] b = second.codePoints().toArray();
    int[] prev = new int[b.length + 1];
    int[] cur = new int[b.length + 1];
    for (int j = 0; j <= b.length; j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length; i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length; j++) {
        int cost = a[i - 1] == b[j - 1] ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length];
  }
}
