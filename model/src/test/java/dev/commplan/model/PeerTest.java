package dev.commplan.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class PeerTest {
  @Test
  void parsesTheGrammarWithOrWithoutSpaces() {
    assertEquals("rank + 1", Peer.parse("rank + 1").toString());
    assertEquals("rank + 1", Peer.parse("rank+1").toString());
    assertEquals("rank - 2", Peer.parse("  rank   -   2 ").toString());
    assertEquals("(rank + 1) % ranks", Peer.parse("(rank+1)%ranks").toString());
    assertEquals("(rank - 1) % ranks", Peer.parse("( rank - 1 ) % ranks").toString());
    assertEquals("rank + 0", Peer.parse("rank + 0").toString());
    assertEquals("rank - 0", Peer.parse("rank-0").toString());
    assertEquals(7, Peer.parse("rank - 7").distance());
    assertEquals(-7, Peer.parse("rank - 7").offset());
    assertTrue(Peer.parse("(rank - 7) % ranks").wrapped());
    assertFalse(Peer.parse("rank - 7").wrapped());
    assertEquals(Integer.MAX_VALUE, Peer.parse("rank + " + Integer.MAX_VALUE).offset());
  }

  @Test
  void rejectsWhatIsNotAPeerSayingWhy() {
    for (String text : List.of("", "rank", "rank * 2", "rank + ", "rank + -1", "rank + x", "rank + 1.5",
        "rank + 1 % ranks", "(rank + 1) % 4", "(rank + 1)", "(rank + 1", "peer + 1", "rank + 01",
        "rank + 99999999999", "((rank + 1)) % ranks", "rank + 1 + 1", "(rank + 1) % ranks + 1", "1 + rank")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Peer.parse(text), text);
      assertTrue(e.getMessage().startsWith("'" + text + "' is not a peer: "), e.getMessage());
      assertTrue(e.getMessage().endsWith(
          "a peer is rank + k, rank - k, (rank + k) % ranks or (rank - k) % ranks, with k an integer literal >= 0"),
          e.getMessage());
    }
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Peer.parse("(rank + 1) % n")).getMessage()
        .contains("not % n"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> Peer.parse("rank + 1 % ranks")).getMessage()
        .contains("parenthesize it"));
    assertThrows(IllegalArgumentException.class, () -> Peer.parse(null));
  }

  @Test
  void resolvesUnwrappedToNoTransferOutsideTheRanks() {
    Peer next = Peer.parse("rank + 1");
    Peer previous = Peer.parse("rank - 1");
    assertEquals(1, next.resolve(0, 4));
    assertEquals(3, next.resolve(2, 4));
    assertEquals(-1, next.resolve(3, 4)); // the last stage sends to no one
    assertEquals(-1, previous.resolve(0, 4)); // the first receives from no one
    assertEquals(0, previous.resolve(1, 4));
    assertEquals(-1, Peer.parse("rank + 5").resolve(0, 4));
    assertEquals(2, Peer.parse("rank + 0").resolve(2, 4));
    assertEquals(-1, Peer.plus(Integer.MAX_VALUE).resolve(3, 4)); // no int overflow
  }

  @Test
  void resolvesWrappedModuloTheRanksNeverNegative() {
    Peer previous = Peer.parse("(rank - 1) % ranks");
    assertEquals(3, previous.resolve(0, 4)); // not Java's -1
    assertEquals(0, previous.resolve(1, 4));
    assertEquals(0, Peer.parse("(rank + 1) % ranks").resolve(3, 4));
    assertEquals(1, Peer.parse("(rank + 5) % ranks").resolve(0, 4));
    assertEquals(3, Peer.parse("(rank - 5) % ranks").resolve(0, 4));
    assertEquals(0, Peer.parse("(rank + 1) % ranks").resolve(0, 1));
    assertEquals(Math.floorMod(2L + Integer.MAX_VALUE, 7L), Peer.plus(Integer.MAX_VALUE).wrap().resolve(2, 7));
    assertEquals(Math.floorMod(2L - Integer.MAX_VALUE, 7L), Peer.minus(Integer.MAX_VALUE).wrap().resolve(2, 7));
    for (int ranks = 1; ranks <= 9; ranks++) {
      for (int rank = 0; rank < ranks; rank++) {
        for (int k = 0; k < 20; k++) {
          int p = Peer.plus(k).wrap().resolve(rank, ranks);
          assertTrue(p >= 0 && p < ranks);
          // the inverse on the peer leads back
          assertEquals(rank, Peer.plus(k).wrap().inverse().resolve(p, ranks));
          int q = Peer.plus(k).resolve(rank, ranks);
          if (q >= 0) {
            assertEquals(rank, Peer.plus(k).inverse().resolve(q, ranks));
          }
        }
      }
    }
  }

  @Test
  void inverseSwapsTheSignAndKeepsWrapping() {
    assertEquals(Peer.parse("rank - 3"), Peer.parse("rank + 3").inverse());
    assertEquals(Peer.parse("(rank + 3) % ranks"), Peer.parse("(rank - 3) % ranks").inverse());
    assertEquals("(rank + 3) % ranks", Peer.parse("(rank - 3) % ranks").inverse().toString());
    assertNotEquals(Peer.parse("rank - 3"), Peer.parse("(rank - 3) % ranks"));
    assertEquals(Peer.parse("rank + 0"), Peer.parse("rank - 0"));
    assertEquals(Peer.parse("rank + 0").hashCode(), Peer.parse("rank - 0").hashCode());
    assertEquals(Peer.parse("rank - 2"), Peer.of(-2, false));
    assertEquals(Peer.parse("(rank + 2) % ranks"), Peer.of(2, true));
    assertEquals(Peer.parse("rank + 2"), Peer.parse(Peer.parse("rank+2").toString()));
  }
}
