package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BucketEdges;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.spi.FlightRecorder;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 40 on the local backend: {@link BucketEdges}' scenarios at several world sizes, and what only a local
 * stream's host tasks can show without depending on timing (the two-stream rule orders a second stream after
 * work that is held back) and the local backend's own messages (a bucket's timeout names its plan, fields and
 * the rank that never came).
 */
class LocalBucketEdgesTest {
  private static final Duration GENEROUS = Duration.ofSeconds(120);

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3, 4, 5, 8})
  void closingAPlanChangesNoBoundBuffer(int ranks) {
    try (LocalCluster cluster = new LocalCluster(ranks)) {
      List<List<String>> wrong = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(BucketEdges::closeChangesNothing));
      assertEquals(List.of(), wrong.stream().flatMap(List::stream).toList());
    }
  }

  @ParameterizedTest(name = "{0} ranks, agreement check {1}")
  @org.junit.jupiter.params.provider.CsvSource({"2, true", "2, false", "3, true", "4, false", "5, true"})
  void aCloseBesideADirectCallIsNoCollective(int ranks, boolean agreementCheck) {
    CommOptions options = CommOptions.defaults().withAgreementCheck(agreementCheck);
    try (LocalCluster cluster = new LocalCluster(ranks, options)) {
      List<List<String>> wrong = assertTimeoutPreemptively(GENEROUS,
          () -> cluster.call(BucketEdges::closeAndDirectCallInEitherOrder));
      assertEquals(List.of(), wrong.stream().flatMap(List::stream).toList());
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3, 4, 5, 8})
  void aPlanOnTwoStreamsGivesWhatOneStreamWould(int ranks) {
    int rounds = ranks == 2 ? 200 : 20;
    try (LocalCluster cluster = new LocalCluster(ranks)) {
      List<List<String>> wrong = assertTimeoutPreemptively(GENEROUS,
          () -> cluster.call(comm -> BucketEdges.twoStreamsWithoutAnEvent(comm, rounds)));
      assertEquals(List.of(), wrong.stream().flatMap(List::stream).toList());
    }
  }

  /**
   * The two-stream rule, with timing made irrelevant: after finish, a host task on the communication stream
   * holds x until either the execute on the other stream has run (then, without the rule, it would have read x
   * before the task wrote 7) or the other stream's worker is waiting for an event (the rule at work); then it
   * writes 7. With the rule, the execute reduces the 7s on every run; without it, it never does.
   */
  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3})
  void anExecuteOnAnotherStreamWaitsForTheRoundsStream(int ranks) {
    try (LocalCluster cluster = new LocalCluster(ranks)) {
      List<Float> x = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        try (BucketEdges.Fields f = BucketEdges.Fields.allocate(comm); LocalStream rounds = (LocalStream) comm.newStream();
            LocalStream other = (LocalStream) comm.newStream();
            Plan plan = BucketEdges.planBuilder(comm, "edges.Held", f).commStream(rounds).build()) {
          AtomicBoolean executed = new AtomicBoolean();
          BucketEdges.round(plan, comm.stream(), comm.stream());
          rounds.enqueueHostTask(() -> {
            while (!executed.get() && !waitsForAnEvent(other)) {
              Thread.sleep(1);
            }
            f.x().fill(7);
          });
          plan.execute(other);
          other.enqueueHostTask(() -> executed.set(true));
          other.synchronize();
          comm.stream().synchronize();
          return f.x().get(0);
        }
      }));
      assertEquals(java.util.Collections.nCopies(ranks, 7f * ranks), x);
    }
  }

  /** Whether {@code stream}'s worker is running a wait for an event (its oldest pending operation has started). */
  private static boolean waitsForAnEvent(LocalStream stream) {
    FlightRecorder.Entry pending = stream.recorder.oldestPending();
    return pending != null && pending.state() == FlightRecorder.State.STARTED
        && pending.label().collective().startsWith("wait for an event");
  }

  /**
   * Issue 40, item 1: a rank closes the plan with its round open (bucket 0 enqueued); it is told which fields it
   * never marked, and its peer, which finished the round, times out in bucket 1, which names the plan, the field
   * and the rank that never came (item 3).
   */
  @Test
  void aPlanClosedMidRoundIsNamedOnBothRanks() {
    CommOptions options = CommOptions.defaults().withTimeout(Duration.ofSeconds(1));
    AtomicReferenceArray<Throwable> thrown = new AtomicReferenceArray<>(2);
    CountDownLatch peerDone = new CountDownLatch(1);
    try (LocalCluster cluster = new LocalCluster(2, options)) {
      assertTimeoutPreemptively(GENEROUS, () -> {
        try {
          cluster.run(comm -> {
            try (BucketEdges.Fields f = BucketEdges.Fields.allocate(comm)) {
              Plan plan = BucketEdges.plan(comm, "edges.OpenRound", f);
              if (comm.rank() == 0) {
                plan.ready(BucketEdges.Z, comm.stream()); // bucket 0 goes out; then the plan is closed
                thrown.set(0, assertThrows(IllegalStateException.class, plan::close));
                peerDone.await(60, TimeUnit.SECONDS);
              } else {
                try {
                  BucketEdges.round(plan, comm.stream(), comm.stream());
                  comm.stream().synchronize();
                } catch (Throwable t) { // whatever it is, the assertions below say it
                  thrown.set(1, t);
                } finally {
                  peerDone.countDown();
                }
              }
            }
          });
        } catch (RuntimeException expected) {
          // the timeout aborted the cluster's run: what each rank saw is checked below
        }
      });
    }
    IllegalStateException closed = assertInstanceOf(IllegalStateException.class, thrown.get(0));
    assertTrue(closed.getMessage().contains("plan edges.OpenRound was closed during a ready()/finish() round, with"
        + " fields never marked ready: [x, y]"), closed.getMessage());
    assertTrue(closed.getMessage().contains("bucket 1 and those after it were not enqueued on this rank"),
        closed.getMessage());
    // Bucket 1 times out on its stream. Where this host reaches finish() before the timeout, the user's stream
    // waits for that stream and reports the timeout itself; where the host is slower than the timeout (a loaded
    // CI machine), the timeout's abort reaches the user's stream first, and the RankAbortedException carries
    // the timeout as its cause. Either way the timeout must name the plan, the bucket, the field and the rank.
    CommTimeoutException timedOut = timeoutWithin(thrown.get(1));
    assertEquals("edges.OpenRound", timedOut.planName(), timedOut.getMessage());
    assertEquals(List.of("y"), timedOut.fields(), timedOut.getMessage());
    assertEquals(List.of(0), timedOut.missingRanks(), timedOut.getMessage());
    assertTrue(timedOut.getMessage().contains("bucket 1"), timedOut.getMessage());
  }

  /** {@code thrown} if it is a timeout, else the timeout among the causes of a {@link RankAbortedException}. */
  private static CommTimeoutException timeoutWithin(Throwable thrown) {
    Throwable t = thrown;
    if (thrown instanceof RankAbortedException) {
      while (t != null && !(t instanceof CommTimeoutException)) {
        t = t.getCause();
      }
    }
    return assertInstanceOf(CommTimeoutException.class, t, () -> "rank 1 got " + thrown);
  }

  /**
   * Issue 42, item 3: a rank closes the plan with its round open (bucket 0 enqueued), then makes a direct call of
   * the shape of bucket 1, where its peer finished the round. The rendezvous finds the calls differing and hands
   * them to the agreement check, whose message names the open round from the ranks' records (as MPI's window check
   * would): what the closing rank did at call 2, and the fields it never marked ready.
   */
  @Test
  void aCallAfterAPlanClosedMidRoundNamesTheOpenRound() {
    AtomicReferenceArray<Throwable> thrown = new AtomicReferenceArray<>(2);
    AtomicReference<Throwable> first = new AtomicReference<>();
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.defaults().withTimeout(Duration.ofSeconds(30)))) {
      assertTimeoutPreemptively(GENEROUS, () -> {
        try {
          cluster.run(comm -> {
            try (BucketEdges.Fields f = BucketEdges.Fields.allocate(comm);
                F32Buffer direct = F32Buffer.allocate(comm, BucketEdges.COUNT)) {
              Plan plan = BucketEdges.plan(comm, "edges.Closed", f);
              try {
                if (comm.rank() == 0) {
                  plan.ready(BucketEdges.Z, comm.stream()); // call 1: bucket 0; then the plan is closed (call 2)
                  assertThrows(IllegalStateException.class, plan::close);
                  comm.allReduce(direct, direct, ReduceOp.SUM, comm.stream()); // call 3, against bucket 1
                } else {
                  BucketEdges.round(plan, comm.stream(), comm.stream()); // calls 1 to 3: buckets 0, 1, 2
                }
                comm.stream().synchronize();
              } catch (RuntimeException e) {
                thrown.set(comm.rank(), e);
                throw e;
              } finally {
                if (comm.rank() == 1) {
                  plan.close();
                }
              }
            }
          });
        } catch (RuntimeException expected) { // the disagreement ends the run: the first rank to fail names it
          first.set(expected.getCause());
        }
      });
    }
    String message = "world: the ranks disagree about their calls: call 2 was, on rank 0, plan edges.Closed, closed"
        + " during a ready()/finish() round before bucket 1 was enqueued (fields never marked ready: x, y); on rank 1,"
        + " plan edges.Closed, bucket 1 (step 0) (differing: call (another call at this place))";
    DisagreementException d = assertInstanceOf(DisagreementException.class, first.get());
    assertTrue(d.getMessage().startsWith(message), d.getMessage());
    assertEquals(Set.of("plan edges.Closed, bucket 1 (step 0)", "plan edges.Closed, closed during a ready()/finish()"
        + " round before bucket 1 was enqueued (fields never marked ready: x, y)"), Set.of(d.thisRank(), d.otherRank()));
    for (int r = 0; r < 2; r++) { // its own, or, aborted by the first, that one's, quoted
      Throwable t = thrown.get(r);
      assertNotNull(t, "rank " + r);
      assertTrue(t.getMessage().contains(message), "rank " + r + ": " + t);
    }
  }

  /**
   * Issue 40, item 3: the tester's case. Three ranks, timeout 1 s; rank 2 marks its fields only after three
   * timeouts. Ranks 0 and 1 synchronize the consumer of their round: each gets the bucket's own timeout, which
   * names the plan, the bucket's fields and rank 2, not a wait for an event that names nothing.
   */
  @Test
  void aBucketThatTimesOutNamesThePlanTheFieldsAndTheMissingRank() {
    CommOptions options = CommOptions.defaults().withTimeout(Duration.ofSeconds(1));
    AtomicReferenceArray<Throwable> thrown = new AtomicReferenceArray<>(3);
    try (LocalCluster cluster = new LocalCluster(3, options)) {
      assertTimeoutPreemptively(GENEROUS, () -> {
        try {
          cluster.run(comm -> {
            try (BucketEdges.Fields f = BucketEdges.Fields.allocate(comm);
                Plan plan = BucketEdges.plan(comm, "edges.Late", f)) {
              try {
                if (comm.rank() == 2) {
                  Thread.sleep(3_000);
                }
                BucketEdges.round(plan, comm.stream(), comm.stream());
                comm.stream().synchronize();
              } catch (Exception e) {
                thrown.set(comm.rank(), e);
                throw e;
              }
            }
          });
        } catch (RuntimeException expected) {
          // the timeout aborted the run
        }
      });
    }
    for (int r = 0; r < 2; r++) {
      CommTimeoutException e = assertInstanceOf(CommTimeoutException.class, thrown.get(r), "rank " + r);
      assertEquals("edges.Late", e.planName(), e.getMessage());
      assertEquals(List.of("z"), e.fields(), e.getMessage());
      assertEquals(List.of(2), e.missingRanks(), e.getMessage());
      assertTrue(e.getMessage().contains("bucket 0"), e.getMessage());
    }
    assertNotNull(thrown.get(2), "rank 2 finds its cluster aborted");
  }
}
