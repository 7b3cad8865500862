package dev.commplan.runtime.agreement;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The comparison's timeout message when the backend does or does not know which ranks stayed away. */
class TextExchangeTest {
  @Test
  void aTimeoutNamesTheMissingRanksOrSaysTheBackendCannotTell() {
    assertEquals("ranks [1, 2]", TextExchange.whoMissed(List.of(1, 2)));
    // NCCL's wait knows only its own pending call (run 11's mesh timeout said "ranks [] did not")
    assertEquals("a rank (which one, this backend cannot tell)", TextExchange.whoMissed(List.of()));
  }
}
