package dev.commplan.doctor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON reader (RFC 8259): objects become {@code Map<String, Object>} in file order, arrays
 * {@code List<Object>}, strings {@code String}, integers {@code Long}, other numbers {@code Double}, and
 * {@code true}, {@code false}, {@code null} themselves. Strict because a flight record is written by a
 * program: anything RFC 8259 refuses (a trailing comma, a comment, a lone surrogate, text after the value,
 * a duplicate key) is an error with its line and column, never a guess. Nesting is limited so that no input
 * can overflow the stack.
 */
final class Json {
  /** Far deeper than a flight record (4 levels); deep enough for any value a later version adds. */
  static final int MAX_DEPTH = 64;

  /** Input that is not one JSON value; the message says what and where. */
  static final class SyntaxException extends Exception {
    private static final long serialVersionUID = 1L;

    SyntaxException(String message) {
      super(message);
    }
  }

  private final String text;
  private int at;

  private Json(String text) {
    this.text = text;
  }

  /**
   * Reads one JSON value that is the whole of {@code text} (white space around it allowed).
   *
   * @throws SyntaxException naming the first problem and its line and column
   */
  static Object parse(String text) throws SyntaxException {
    Json json = new Json(text);
    json.skipSpace();
    Object value = json.value(0);
    json.skipSpace();
    if (json.at < text.length()) {
      throw json.error("more text after the end of the JSON value");
    }
    return value;
  }

  private Object value(int depth) throws SyntaxException {
    if (depth > MAX_DEPTH) {
      throw error("values nested deeper than " + MAX_DEPTH + " levels");
    }
    if (at >= text.length()) {
      throw error("unexpected end of input");
    }
    char c = text.charAt(at);
    return switch (c) {
      case '{' -> object(depth);
      case '[' -> array(depth);
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> {
        if (c == '-' || (c >= '0' && c <= '9')) {
          yield number();
        }
        throw error("unexpected " + describe(c));
      }
    };
  }

  private Map<String, Object> object(int depth) throws SyntaxException {
    at++; // {
    Map<String, Object> members = new LinkedHashMap<>();
    skipSpace();
    if (peek() == '}') {
      at++;
      return Collections.unmodifiableMap(members);
    }
    while (true) {
      skipSpace();
      if (peek() == '}' && !members.isEmpty()) {
        throw error("a comma before '}' (JSON allows none after the last member)");
      }
      if (peek() != '"') {
        throw error(at >= text.length() ? "unexpected end of input" : "expected a member name in quotes, found "
            + describe(text.charAt(at)));
      }
      int keyAt = at;
      String key = string();
      skipSpace();
      expect(':');
      skipSpace();
      Object value = value(depth + 1);
      if (members.containsKey(key)) {
        at = keyAt;
        throw error("the member \"" + key + "\" appears twice in one object");
      }
      members.put(key, value);
      skipSpace();
      if (peek() == ',') {
        at++;
        continue;
      }
      expect('}');
      return Collections.unmodifiableMap(members);
    }
  }

  private List<Object> array(int depth) throws SyntaxException {
    at++; // [
    List<Object> items = new ArrayList<>();
    skipSpace();
    if (peek() == ']') {
      at++;
      return Collections.unmodifiableList(items);
    }
    while (true) {
      skipSpace();
      if (peek() == ']' && !items.isEmpty()) {
        throw error("a comma before ']' (JSON allows none after the last item)");
      }
      items.add(value(depth + 1));
      skipSpace();
      if (peek() == ',') {
        at++;
        continue;
      }
      expect(']');
      return Collections.unmodifiableList(items);
    }
  }

  private String string() throws SyntaxException {
    at++; // "
    StringBuilder s = new StringBuilder();
    while (true) {
      if (at >= text.length()) {
        throw error("unexpected end of input inside a string");
      }
      char c = text.charAt(at);
      if (c == '"') {
        at++;
        return s.toString();
      }
      if (c < 0x20) {
        throw error("a control character (" + describe(c) + ") inside a string; JSON writes it as an escape");
      }
      if (Character.isSurrogate(c)) {
        // As read from UTF-8, a surrogate comes only in a valid pair; anything else was a bad byte.
        if (Character.isHighSurrogate(c) && at + 1 < text.length() && Character.isLowSurrogate(text.charAt(at + 1))) {
          s.append(c).append(text.charAt(at + 1));
          at += 2;
          continue;
        }
        throw error("a character that is not valid UTF-16 inside a string");
      }
      if (c != '\\') {
        s.append(c);
        at++;
        continue;
      }
      at++;
      if (at >= text.length()) {
        throw error("unexpected end of input inside a string");
      }
      char e = text.charAt(at++);
      switch (e) {
        case '"' -> s.append('"');
        case '\\' -> s.append('\\');
        case '/' -> s.append('/');
        case 'b' -> s.append('\b');
        case 'f' -> s.append('\f');
        case 'n' -> s.append('\n');
        case 'r' -> s.append('\r');
        case 't' -> s.append('\t');
        case 'u' -> s.append(unicodeEscape());
        default -> {
          at -= 2;
          throw error("an unknown escape \\" + e + " inside a string");
        }
      }
    }
  }

  /** After {@code \\u}: four hex digits, and a surrogate pair's second half where the first needs one. */
  private char[] unicodeEscape() throws SyntaxException {
    char first = hex4();
    if (Character.isLowSurrogate(first)) {
      throw error("a \\u escape of a lone low surrogate");
    }
    if (!Character.isHighSurrogate(first)) {
      return new char[] {first};
    }
    if (!text.startsWith("\\u", at)) {
      throw error("a \\u escape of a high surrogate without its low half");
    }
    at += 2;
    char second = hex4();
    if (!Character.isLowSurrogate(second)) {
      throw error("a \\u escape of a high surrogate without its low half");
    }
    return new char[] {first, second};
  }

  private char hex4() throws SyntaxException {
    if (at + 4 > text.length()) {
      throw error("unexpected end of input inside a \\u escape");
    }
    int v = 0;
    for (int i = 0; i < 4; i++) {
      int d = Character.digit(text.charAt(at), 16);
      if (d < 0) {
        throw error("a \\u escape needs four hex digits, found " + describe(text.charAt(at)));
      }
      v = v * 16 + d;
      at++;
    }
    return (char) v;
  }

  private Object number() throws SyntaxException {
    int start = at;
    if (peek() == '-') {
      at++;
    }
    if (peek() == '0') {
      at++;
      if (isDigit(peek())) {
        throw error("a number with a leading zero");
      }
    } else if (isDigit(peek())) {
      digits();
    } else {
      throw error(at >= text.length() ? "unexpected end of input inside a number" : "a '-' not followed by a digit");
    }
    boolean integer = true;
    if (peek() == '.') {
      integer = false;
      at++;
      requireDigit("after the decimal point");
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      integer = false;
      at++;
      if (peek() == '+' || peek() == '-') {
        at++;
      }
      requireDigit("in the exponent");
      digits();
    }
    String literal = text.substring(start, at);
    if (integer) {
      try {
        return Long.parseLong(literal);
      } catch (NumberFormatException e) {
        at = start;
        throw error("the integer " + literal + " does not fit in 64 bits");
      }
    }
    return Double.parseDouble(literal);
  }

  private void requireDigit(String where) throws SyntaxException {
    if (!isDigit(peek())) {
      throw error(at >= text.length() ? "unexpected end of input inside a number" : "a digit missing " + where);
    }
  }

  private void digits() {
    while (isDigit(peek())) {
      at++;
    }
  }

  private static boolean isDigit(int c) {
    return c >= '0' && c <= '9';
  }

  private Object literal(String word, Object value) throws SyntaxException {
    if (!text.startsWith(word, at)) {
      if (word.startsWith(text.substring(at))) {
        at = text.length();
        throw error("unexpected end of input");
      }
      throw error("unexpected " + describe(text.charAt(at)));
    }
    at += word.length();
    return value;
  }

  private void expect(char c) throws SyntaxException {
    if (at >= text.length()) {
      throw error("unexpected end of input");
    }
    if (text.charAt(at) != c) {
      throw error("expected '" + c + "', found " + describe(text.charAt(at)));
    }
    at++;
  }

  /** The next character, or -1 at the end. */
  private int peek() {
    return at < text.length() ? text.charAt(at) : -1;
  }

  private void skipSpace() {
    while (at < text.length()) {
      char c = text.charAt(at);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        return;
      }
      at++;
    }
  }

  private static String describe(char c) {
    return c >= 0x20 && c < 0x7f ? "'" + c + "'" : String.format("U+%04X", (int) c);
  }

  /** The problem at the current position: {@code ... at line 3, column 14}. */
  private SyntaxException error(String what) {
    int line = 1;
    int lineStart = 0;
    int end = Math.min(at, text.length());
    for (int i = 0; i < end; i++) {
      if (text.charAt(i) == '\n') {
        line++;
        lineStart = i + 1;
      }
    }
    return new SyntaxException(what + " at line " + line + ", column " + (end - lineStart + 1));
  }
}
