package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.SameDisagreement;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link SameDisagreement} on NCCL (issue 42, item 3): the scenarios NCCL completes (they move the same bytes on
 * every rank: a plan and a direct call in opposite orders, a send of floats into a receive of ints) end, on every
 * rank that takes part, in the message the local backend and MPI give for the same mistake, from the agreement
 * check after call 1: the first rank to fail throws it, and every rank that finds it itself says the same (the
 * others end with the abort the first failure causes). Each world size of 2 or more of {@link GpuRanks};
 * skipped without a GPU.
 */
@NcclGpuTest
class NcclSameDisagreementGpuTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final Duration LIMIT = TIMEOUT.plus(Duration.ofSeconds(2 * NcclCluster.GRACE_MILLIS / 1000 + 60));

  static Stream<Arguments> scenarios() {
    return GpuRanks.requested().stream() // every size, so that one without peers shows as skipped, saying why
        .flatMap(n -> Stream.of("plan-against-direct-call", "send-type").map(s -> Arguments.of(s, n)));
  }

  @ParameterizedTest(name = "{0} on {1} ranks")
  @MethodSource("scenarios")
  void theScenarioEndsInTheMessageEveryBackendGives(String scenario, int ranks) {
    assumeTrue(ranks >= 2, () -> "a disagreement needs two ranks or more, not " + ranks + " (-D" + GpuRanks.PROPERTY
        + ")");
    GpuRanks.assumeRunnable(ranks);
    AtomicReferenceArray<Throwable> thrown = new AtomicReferenceArray<>(ranks);
    CommPlanException run = assertTimeoutPreemptively(LIMIT, () -> {
      try (Cluster cluster = NcclBackend.cluster(ranks, CommOptions.timeout(TIMEOUT))) {
        return assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
          try {
            SameDisagreement.run(scenario, comm);
          } catch (RuntimeException e) {
            thrown.set(comm.rank(), e);
            throw e;
          }
        }));
      }
    });
    String message = SameDisagreement.message(scenario, ranks);
    System.out.println("[commplan] " + scenario + " on " + ranks + " ranks: " + run.getMessage());
    DisagreementException first = assertInstanceOf(DisagreementException.class, run.getCause(), run.toString());
    assertEquals(message, first.getMessage());
    for (int r = 0; r < ranks; r++) { // every rank that found it itself says the same
      if (thrown.get(r) instanceof DisagreementException d) {
        assertEquals(message, d.getMessage(), "rank " + r);
      }
    }
  }
}
