package dev.commplan.processor.shape;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * An element count as a product: a positive constant times symbols with positive exponents, such as {@code
 * 4·ranks·hidden²}. Two counts are equal exactly when their monomials are equal, which is how the
 * processor compares {@code @Shape}s without knowing the dims: {@code "ranks*n"} equals {@code {"n",
 * "ranks"}}.
 *
 * <p>The constant is a {@link BigInteger}, so building and comparing counts never overflows; whether the
 * constant fits the {@code long} that the generated code computes with is checked separately ({@link
 * #constantFitsInLong()}).
 *
 * @param constant the constant factor, at least 1
 * @param powers each symbol's exponent (at least 1), sorted by name; unmodifiable
 */
public record Monomial(BigInteger constant, SortedMap<String, Integer> powers) {
  /** The built-in symbol for the communicator's size. */
  public static final String RANKS = "ranks";

  /** The empty product, 1. */
  public static final Monomial ONE = new Monomial(BigInteger.ONE, new TreeMap<>());

  private static final BigInteger LONG_MAX = BigInteger.valueOf(Long.MAX_VALUE);

  public Monomial {
    if (constant.signum() <= 0) {
      throw new IllegalArgumentException("constant must be > 0, was " + constant);
    }
    TreeMap<String, Integer> copy = new TreeMap<>();
    for (Map.Entry<String, Integer> e : powers.entrySet()) {
      if (e.getValue() < 1) {
        throw new IllegalArgumentException("exponent of " + e.getKey() + " must be >= 1, was " + e.getValue());
      }
      copy.put(e.getKey(), e.getValue());
    }
    powers = Collections.unmodifiableSortedMap(copy);
  }

  /** The constant {@code value} (> 0). */
  public static Monomial constant(BigInteger value) {
    return new Monomial(value, new TreeMap<>());
  }

  /** The constant {@code value} (> 0). */
  public static Monomial constant(long value) {
    return constant(BigInteger.valueOf(value));
  }

  /** The symbol {@code name} to the first power. */
  public static Monomial symbol(String name) {
    TreeMap<String, Integer> p = new TreeMap<>();
    p.put(name, 1);
    return new Monomial(BigInteger.ONE, p);
  }

  /** The product of this and {@code other}. */
  public Monomial times(Monomial other) {
    TreeMap<String, Integer> p = new TreeMap<>(powers);
    other.powers.forEach((s, e) -> p.merge(s, e, Integer::sum));
    return new Monomial(constant.multiply(other.constant), p);
  }

  /** This count with {@code symbol} replaced by the constant {@code value} (> 0). */
  public Monomial substitute(String symbol, long value) {
    Integer exponent = powers.get(symbol);
    if (exponent == null) {
      return this;
    }
    TreeMap<String, Integer> p = new TreeMap<>(powers);
    p.remove(symbol);
    return new Monomial(constant.multiply(BigInteger.valueOf(value).pow(exponent)), p);
  }

  /**
   * The exact quotient {@code this / divisor} when it is a monomial (the constant divides and every
   * exponent is large enough), otherwise empty.
   */
  public Optional<Monomial> divide(Monomial divisor) {
    BigInteger[] qr = constant.divideAndRemainder(divisor.constant);
    if (qr[1].signum() != 0) {
      return Optional.empty();
    }
    TreeMap<String, Integer> p = new TreeMap<>(powers);
    for (Map.Entry<String, Integer> e : divisor.powers.entrySet()) {
      int have = p.getOrDefault(e.getKey(), 0);
      if (have < e.getValue()) {
        return Optional.empty();
      }
      if (have == e.getValue()) {
        p.remove(e.getKey());
      } else {
        p.put(e.getKey(), have - e.getValue());
      }
    }
    return Optional.of(new Monomial(qr[0], p));
  }

  /** Whether no symbol occurs: the count is known at compile time. */
  public boolean isConstant() {
    return powers.isEmpty();
  }

  /** Whether the constant factor fits in a {@code long}. */
  public boolean constantFitsInLong() {
    return constant.compareTo(LONG_MAX) <= 0;
  }

  /** The factors, constant first (omitted when 1 unless nothing else is left), symbols repeated by exponent. */
  public List<String> factors(Comparator<String> symbolOrder) {
    List<String> out = new ArrayList<>();
    if (!constant.equals(BigInteger.ONE) || powers.isEmpty()) {
      out.add(constant.toString());
    }
    List<String> symbols = new ArrayList<>(powers.keySet());
    symbols.sort(symbolOrder);
    for (String s : symbols) {
      for (int i = 0; i < powers.get(s); i++) {
        out.add(s);
      }
    }
    return out;
  }

  /** The count in {@code @Shape} syntax, such as {@code 4*ranks*hidden}. */
  public String format(Comparator<String> symbolOrder) {
    return String.join("*", factors(symbolOrder));
  }

  /** {@code ranks} first, then other symbols in the given order (dims as declared), then by name. */
  public static Comparator<String> symbolOrder(List<String> dims) {
    return Comparator.<String>comparingInt(s -> s.equals(RANKS) ? -1 : dims.contains(s) ? dims.indexOf(s) : dims.size())
        .thenComparing(Comparator.naturalOrder());
  }

  /** Formats with {@code ranks} first and other symbols by name. */
  @Override
  public String toString() {
    return format(symbolOrder(List.of()));
  }
}
