package dev.commplan.processor.shape;

import dev.commplan.processor.lang.Identifiers;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;

/**
 * One {@code @Shape} entry, parsed: {@code entry := factor ('*' factor)*}, {@code factor := digits |
 * identifier}, spaces allowed around factors. A literal must be greater than 0; an identifier is either
 * {@code ranks} or a dim, which the validator checks against {@code @CommPlan(dims)}.
 */
public sealed interface ShapeEntry {
  /** One factor of an entry. */
  sealed interface Factor {}

  /** A positive integer literal. */
  record Literal(BigInteger value) implements Factor {}

  /**
   * {@code ranks} or a dim name, as the compiler reads it ({@link Identifiers#canonical}: {@code
   * "n\u005Cu200B"} is {@code n}).
   */
  record Symbol(String name) implements Factor {}

  /** An entry that parsed. */
  record Valid(List<Factor> factors) implements ShapeEntry {
    public Valid {
      factors = List.copyOf(factors);
    }

    /** The symbols named, in order of appearance. */
    public List<String> symbols() {
      List<String> out = new ArrayList<>();
      for (Factor f : factors) {
        if (f instanceof Symbol s) {
          out.add(s.name());
        }
      }
      return out;
    }

    /** The product of the factors. */
    public Monomial count() {
      Monomial m = Monomial.ONE;
      for (Factor f : factors) {
        m = m.times(switch (f) {
          case Literal l -> Monomial.constant(l.value());
          case Symbol s -> Monomial.symbol(s.name());
        });
      }
      return m;
    }
  }

  /** An entry that did not parse; {@code reason} says why, for the diagnostic. */
  record Invalid(String reason) implements ShapeEntry {}

  /**
   * Parses one entry. Never throws. Walks code points, not UTF-16 units, so that an identifier outside the
   * Basic Multilingual Plane ({@code "𝑛"}) is one, and messages show the character written; positions
   * count characters (code points) from 1.
   */
  static ShapeEntry parse(String text) {
    if (text.isBlank()) {
      return new Invalid("the entry is empty");
    }
    List<Factor> factors = new ArrayList<>();
    int i = 0;
    int n = text.length();
    while (true) {
      i = skipSpaces(text, i);
      if (i >= n) {
        return new Invalid(factors.isEmpty() ? "the entry is empty" : "a factor is missing after the last '*'");
      }
      int c = text.codePointAt(i);
      int start = i;
      if (c >= '0' && c <= '9') {
        while (i < n && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
          i++;
        }
        BigInteger value = new BigInteger(text.substring(start, i));
        if (value.signum() == 0) {
          return new Invalid("the literal '" + text.substring(start, i) + "' is 0, and every entry must be > 0");
        }
        if (i < n && Character.isJavaIdentifierPart(text.codePointAt(i))) {
          return new Invalid("unexpected " + Identifiers.show(text.codePointAt(i)) + " after the number at position "
              + position(text, i) + " (write a product with '*', e.g. \"4*hidden\")");
        }
        factors.add(new Literal(value));
      } else if (Character.isJavaIdentifierStart(c)) {
        i += Character.charCount(c);
        while (i < n && Character.isJavaIdentifierPart(text.codePointAt(i))) {
          i += Character.charCount(text.codePointAt(i));
        }
        factors.add(new Symbol(Identifiers.canonical(text.substring(start, i))));
      } else if (c == '*') {
        return new Invalid("a factor is missing before the '*' at position " + position(text, i));
      } else if (c == '-') {
        return new Invalid("unexpected '-' at position " + position(text, i) + ": sizes are positive");
      } else {
        return new Invalid("unexpected " + Identifiers.show(c) + " at position " + position(text, i) + ": only '*' joins factors");
      }
      i = skipSpaces(text, i);
      if (i >= n) {
        return new Valid(factors);
      }
      int d = text.codePointAt(i);
      if (d != '*') {
        return new Invalid("unexpected " + Identifiers.show(d) + " at position " + position(text, i)
            + (Character.isJavaIdentifierPart(d) ? ": factors are joined by '*'" : ": only '*' joins factors"));
      }
      i++;
    }
  }

  /** The 1-based position of the character at UTF-16 index {@code index}, counted in code points. */
  private static int position(String text, int index) {
    return text.codePointCount(0, index) + 1;
  }

  private static int skipSpaces(String text, int i) {
    while (i < text.length() && Character.isWhitespace(text.codePointAt(i))) {
      i += Character.charCount(text.codePointAt(i));
    }
    return i;
  }
}
