package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.SameDisagreement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@link SameDisagreement} on the local backend: the rendezvous (collectives) and the mailboxes (a send and its
 * receive) find each mistake where the ranks meet, before any agreement check compares a window, and every rank
 * that takes part ends with the message MPI's and NCCL's agreement check give for the same mistake: its own
 * DisagreementException, or, where the first rank's failure aborted the run before, a RankAbortedException that
 * quotes it (as on MPI). The ranks outside a send and its receive take no part: they return, or are aborted.
 */
class LocalSameDisagreementTest {
  private static final Duration GENEROUS = Duration.ofSeconds(120);

  @ParameterizedTest(name = "{0} on {1} ranks")
  @CsvSource({"broadcast-count, 2", "broadcast-count, 3", "all-reduce-count, 2", "all-reduce-count, 4",
      "plan-against-direct-call, 2", "plan-against-direct-call, 3", "short-send, 2", "short-send, 3", "send-type, 2",
      "send-type, 3"})
  void everyRankThatTakesPartEndsWithTheOneMessage(String scenario, int ranks) {
    AtomicReferenceArray<Object> results = new AtomicReferenceArray<>(ranks);
    AtomicReference<Throwable> first = new AtomicReference<>();
    try (LocalCluster cluster = new LocalCluster(ranks, CommOptions.timeout(Duration.ofSeconds(30)))) {
      assertTimeoutPreemptively(GENEROUS, () -> {
        try {
          cluster.run(comm -> {
            try {
              SameDisagreement.run(scenario, comm);
              results.set(comm.rank(), "returned");
            } catch (RuntimeException e) {
              results.set(comm.rank(), e);
              throw e; // its stream failed: the run fails with it
            }
          });
        } catch (CommPlanException expected) { // a rank's failure ends the run: the first rank to fail
          first.set(expected.getCause());
        }
      });
    }
    String message = SameDisagreement.message(scenario, ranks);
    assertEquals(message, assertInstanceOf(DisagreementException.class, first.get()).getMessage());
    for (int r = 0; r < ranks; r++) {
      Object result = results.get(r);
      if (result instanceof DisagreementException e) {
        assertEquals(message, e.getMessage(), "rank " + r);
      } else if (!(SameDisagreement.pairOnly(scenario) && r > 1)) { // told by the rank that failed first: it quotes it
        RankAbortedException e = assertInstanceOf(RankAbortedException.class, result, "rank " + r);
        assertTrue(e.getMessage().contains(": " + message), "rank " + r + ": " + e.getMessage());
      }
    }
  }
}
