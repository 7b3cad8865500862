package dev.commplan.processor.shape;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MonomialTest {
  /** The count of a whole {@code @Shape}: the product of its entries. */
  private static Monomial count(String... entries) {
    Monomial m = Monomial.ONE;
    for (String e : entries) {
      m = m.times(assertInstanceOf(ShapeEntry.Valid.class, ShapeEntry.parse(e), e).count());
    }
    return m;
  }

  @Test
  void productsCompareAsMonomials() {
    assertEquals(count("ranks*n"), count("n", "ranks"));
    assertEquals(count("4 * hidden"), count("2", "2", "hidden"));
    assertEquals(count("hidden*4"), count("4", "hidden"));
    assertEquals(count("a*b*a"), count("a", "a", "b"));
    assertEquals(count("1", "n"), count("n"));
    assertNotEquals(count("n"), count("n", "n"));
    assertNotEquals(count("ranks", "n"), count("4", "n"));
    assertNotEquals(count("n"), count("m"));
  }

  @Test
  void fixedRanksMakeRanksAConstant() {
    assertEquals(count("4*n"), count("ranks*n").substitute(Monomial.RANKS, 4));
    assertEquals(count("16", "n"), count("ranks", "ranks", "n").substitute(Monomial.RANKS, 4));
    assertEquals(count("n"), count("n").substitute(Monomial.RANKS, 4));
  }

  @Test
  void exactDivision() {
    assertEquals(Optional.of(count("n")), count("ranks", "n").divide(Monomial.symbol(Monomial.RANKS)));
    assertEquals(Optional.of(count("2", "n")), count("8", "n").divide(Monomial.constant(4)));
    assertEquals(Optional.empty(), count("n").divide(Monomial.symbol(Monomial.RANKS)));
    assertEquals(Optional.empty(), count("6").divide(Monomial.constant(4)));
    assertEquals(Optional.of(Monomial.ONE), count("ranks").divide(Monomial.symbol(Monomial.RANKS)));
  }

  @Test
  void formatsRanksFirstThenDimsAsDeclared() {
    var order = Monomial.symbolOrder(List.of("batch", "hidden"));
    assertEquals("4*ranks*batch*hidden", count("hidden", "4", "batch*ranks").format(order));
    assertEquals("1", Monomial.ONE.format(order));
    assertEquals("ranks*ranks", count("ranks", "ranks").format(order));
    assertEquals(List.of("2", "ranks", "hidden"), count("hidden*2*ranks").factors(order));
    assertEquals("ranks*hidden", count("hidden", "ranks").toString());
  }

  @Test
  void constantsNeverOverflowAndSayWhetherTheyFitALong() {
    Monomial big = count("4294967296", "4294967296");
    assertEquals(new BigInteger("18446744073709551616"), big.constant());
    assertFalse(big.constantFitsInLong());
    assertTrue(count("9223372036854775807").constantFitsInLong());
    assertFalse(count("9223372036854775808").constantFitsInLong());
    assertFalse(count("3037000500", "3037000500").constantFitsInLong());
    assertTrue(count("3037000499", "3037000499").constantFitsInLong());
  }

  @Test
  void rejectsNonPositiveParts() {
    assertThrows(IllegalArgumentException.class, () -> Monomial.constant(0));
    assertThrows(IllegalArgumentException.class, () -> Monomial.constant(-1));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "1024           | 1024",
    "hidden         | hidden",
    "ranks*n        | ranks*n",
    "'4 * hidden'   | 4*hidden",
    "' n *ranks '   | ranks*n",
    "007            | 7",
    "a_1*$b         | $b*a_1",
  })
  void parsesEntries(String entry, String formatted) {
    assertEquals(formatted, count(entry).toString());
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "''         | the entry is empty",
    "0          | the literal '0' is 0, and every entry must be > 0",
    "4*0        | the literal '0' is 0",
    "4**n       | a factor is missing before the '*' at position 3",
    "n*         | a factor is missing after the last '*'",
    "n+1        | unexpected '+' at position 2",
    "-1         | unexpected '-' at position 1",
    "2n         | unexpected 'n' after the number at position 2",
    "n m        | unexpected 'm' at position 3: factors are joined by '*'",
    "(n)        | unexpected '(' at position 1",
    "n^2        | unexpected '^' at position 2",
  })
  void rejectsEntries(String entry, String reason) {
    ShapeEntry.Invalid invalid = assertInstanceOf(ShapeEntry.Invalid.class, ShapeEntry.parse(entry));
    assertTrue(invalid.reason().startsWith(reason), invalid.reason());
  }

  @Test
  void symbolsInOrderOfAppearance() {
    ShapeEntry.Valid v = assertInstanceOf(ShapeEntry.Valid.class, ShapeEntry.parse("n * 2 * ranks * n"));
    assertEquals(List.of("n", "ranks", "n"), v.symbols());
  }
}
