package dev.commplan.processor.shape;

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

  /** {@code ranks} or a dim name. */
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

  /** Parses one entry. Never throws. */
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
      char c = text.charAt(i);
      int start = i;
      if (c >= '0' && c <= '9') {
        while (i < n && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
          i++;
        }
        BigInteger value = new BigInteger(text.substring(start, i));
        if (value.signum() == 0) {
          return new Invalid("the literal '" + text.substring(start, i) + "' is 0, and every entry must be > 0");
        }
        if (i < n && Character.isJavaIdentifierPart(text.charAt(i))) {
          return new Invalid("unexpected '" + text.charAt(i) + "' after the number at position " + (i + 1)
              + " (write a product with '*', e.g. \"4*hidden\")");
        }
        factors.add(new Literal(value));
      } else if (Character.isJavaIdentifierStart(c)) {
        i++;
        while (i < n && Character.isJavaIdentifierPart(text.charAt(i))) {
          i++;
        }
        factors.add(new Symbol(text.substring(start, i)));
      } else if (c == '*') {
        return new Invalid("a factor is missing before the '*' at position " + (i + 1));
      } else if (c == '-') {
        return new Invalid("unexpected '-' at position " + (i + 1) + ": sizes are positive");
      } else {
        return new Invalid("unexpected '" + c + "' at position " + (i + 1) + ": only '*' joins factors");
      }
      i = skipSpaces(text, i);
      if (i >= n) {
        return new Valid(factors);
      }
      if (text.charAt(i) != '*') {
        char d = text.charAt(i);
        return new Invalid("unexpected '" + d + "' at position " + (i + 1) + (Character.isJavaIdentifierPart(d)
            ? ": factors are joined by '*'"
            : ": only '*' joins factors"));
      }
      i++;
    }
  }

  private static int skipSpaces(String text, int i) {
    while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
      i++;
    }
    return i;
  }
}
