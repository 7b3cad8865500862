package dev.commplan.processor.lang;

import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import javax.lang.model.SourceVersion;

/**
 * Java names as the compiler reads them, and characters as messages show them.
 *
 * <p>javac drops every {@link Character#isIdentifierIgnorable identifier-ignorable} character (format
 * characters such as U+200B ZERO WIDTH SPACE, most controls) from an identifier: {@code n\u005Cu200B} and
 * {@code n} are one name to it. Names that come from strings ({@code dims}, {@code name}, {@code into},
 * {@code @Shape}) are therefore compared, and emitted into generated code, in their {@link #canonical}
 * form, which both javac and ecj (which keeps such characters) read as the same name.
 */
public final class Identifiers {
  private Identifiers() {}

  /** {@code name} without its identifier-ignorable characters: the name javac sees. */
  public static String canonical(String name) {
    if (name.codePoints().noneMatch(Character::isIdentifierIgnorable)) {
      return name;
    }
    StringBuilder sb = new StringBuilder(name.length());
    name.codePoints().filter(c -> !Character.isIdentifierIgnorable(c)).forEach(sb::appendCodePoint);
    return sb.toString();
  }

  /** Whether two names are one to the compiler. */
  public static boolean same(String a, String b) {
    return canonical(a).equals(canonical(b));
  }

  /**
   * Whether {@code s} is an identifier, and, read as javac reads it, not a keyword (or {@code _}) in the
   * latest Java version: {@code "cl\u005Cu200Bass"} is {@code class}.
   */
  public static boolean isIdentifier(String s) {
    return SourceVersion.isIdentifier(s) && !SourceVersion.isKeyword(canonical(s), SourceVersion.latestSupported());
  }

  /** The ignorable characters in {@code name}, shown (see {@link #show}), joined by ", ". */
  public static String ignorables(String name) {
    Set<String> shown = new LinkedHashSet<>();
    name.codePoints().filter(Character::isIdentifierIgnorable).forEach(c -> shown.add(describe(c)));
    return String.join(", ", shown);
  }

  /**
   * {@code text} for a message: as it is, but with each character that shows as nothing or as something
   * else written as a Java escape ({@code n\u005Cu200B}), so that two names that look alike do not read
   * alike.
   */
  public static String visible(String text) {
    return text.codePoints()
        .mapToObj(c -> isVisible(c) ? Character.toString(c) : escape(c))
        .collect(Collectors.joining());
  }

  /**
   * A character as messages show it: {@code 'x'}; one that shows as nothing or as something else (a control
   * or format character, such as a zero-width space; a space other than ' '; a lone surrogate; an
   * unassigned or private-use code point) by its code point and name: {@code U+200B (ZERO WIDTH SPACE)}.
   */
  public static String show(int codePoint) {
    return isVisible(codePoint) ? "'" + Character.toString(codePoint) + "'" : describe(codePoint);
  }

  private static String describe(int codePoint) {
    String name = Character.getName(codePoint);
    return String.format(Locale.ROOT, "U+%04X", codePoint) + (name == null ? "" : " (" + name + ")");
  }

  private static String escape(int codePoint) {
    StringBuilder sb = new StringBuilder();
    for (char c : Character.toChars(codePoint)) {
      sb.append(String.format(Locale.ROOT, "\\u%04X", (int) c));
    }
    return sb.toString();
  }

  private static boolean isVisible(int codePoint) {
    if (codePoint == ' ') {
      return true;
    }
    int type = Character.getType(codePoint);
    return !(Character.isISOControl(codePoint)
        || Character.isIdentifierIgnorable(codePoint)
        || Character.isWhitespace(codePoint)
        || type == Character.FORMAT || type == Character.SURROGATE || type == Character.UNASSIGNED
        || type == Character.SPACE_SEPARATOR || type == Character.LINE_SEPARATOR
        || type == Character.PARAGRAPH_SEPARATOR || type == Character.PRIVATE_USE);
  }
}
