package dev.commplan.runtime.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.PlanMismatchException;
import dev.commplan.runtime.agreement.PlanFingerprint;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** The rendezvous with ranks as threads: exchanges, and each way a join or an operation fails, named. */
class RendezvousTest {
  static final String HOST = "127.0.0.1";
  static final Rendezvous.Options FAST = new Rendezvous.Options(Duration.ofSeconds(3), Duration.ofSeconds(3),
      Duration.ofSeconds(2), 1 << 20, null);

  interface RankBody<T> {
    T run(int rank) throws Exception;
  }

  /** Runs {@code body} for each rank on its own thread; each rank's result or its exception. */
  static <T> List<Object> ranks(int n, RankBody<T> body) {
    return assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
      try {
        List<Future<T>> fs = new ArrayList<>();
        for (int r = 0; r < n; r++) {
          int rank = r;
          fs.add(pool.submit((Callable<T>) () -> body.run(rank)));
        }
        List<Object> out = new ArrayList<>();
        for (Future<T> f : fs) {
          try {
            out.add(f.get());
          } catch (ExecutionException e) {
            out.add(e.getCause());
          }
        }
        return out;
      } finally {
        pool.shutdownNow();
      }
    });
  }

  static void assertMentions(String message, String... parts) {
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }
  }

  static String messageOf(Object result) {
    return assertInstanceOf(RendezvousException.class, result, String.valueOf(result)).getMessage();
  }

  private static void exchanges(int n, Rendezvous.Options options) {
    int port = Ports.free();
    Random seeds = new Random(n * 31L);
    byte[][] mine = new byte[n][];
    for (int r = 0; r < n; r++) {
      mine[r] = new byte[seeds.nextInt(300)];
      seeds.nextBytes(mine[r]);
    }
    byte[] id = new byte[128];
    seeds.nextBytes(id);
    List<Object> results = ranks(n, rank -> {
      try (Rendezvous rv = Rendezvous.join(rank, n, HOST, port, options)) {
        byte[] got = rv.broadcast(rank == 0 ? id : null);
        List<byte[]> all = rv.allGather(mine[rank]);
        rv.barrier();
        byte[] again = rv.broadcast(rank == 0 ? mine[0] : new byte[3]);
        return List.of(got, all, again);
      }
    });
    for (Object r : results) {
      if (r instanceof Throwable t) {
        throw new AssertionError(t);
      }
      List<?> l = (List<?>) r;
      assertArrayEquals(id, (byte[]) l.get(0));
      List<?> all = (List<?>) l.get(1);
      for (int k = 0; k < n; k++) {
        assertArrayEquals(mine[k], (byte[]) all.get(k));
      }
      assertArrayEquals(mine[0], (byte[]) l.get(2));
    }
  }

  @Test
  void ranksExchangeWithoutASecret() {
    exchanges(3, FAST);
  }

  @Test
  void ranksExchangeWithASecret() {
    exchanges(4, FAST.withSecret("s3cret"));
    exchanges(2, FAST.withSecret("other"));
  }

  @Test
  void planFingerprintsCanBeComparedOverTheRendezvousBeforeAnyCommunicatorExists() {
    int port = Ports.free();
    List<Object> results = ranks(3, rank -> {
      PlanFingerprint mine = new PlanFingerprint("p.Grads", List.of("plan p.Grads on 3 ranks",
          "op 1: step 0 @AllReduce(op = SUM) grads F32[" + (rank == 1 ? 4097 : 4096) + "]"));
      try (Rendezvous rv = Rendezvous.join(rank, 3, HOST, port, FAST)) {
        List<String> texts = rv.allGather(mine.text().getBytes(StandardCharsets.UTF_8)).stream()
            .map(b -> new String(b, StandardCharsets.UTF_8)).toList();
        PlanMismatchException e = PlanFingerprint.compare("p.Grads", texts);
        return e == null ? null : e.getMessage();
      }
    });
    for (Object r : results) {
      assertMentions((String) r, "rank 1 differs from ranks [0, 2]", "rank 1: step 0 @AllReduce(op = SUM) grads F32[4097]");
    }
  }

  @Test
  void oneRankNeedsNoNetwork() {
    try (Rendezvous rv = Rendezvous.join(0, 1, null, 1, FAST)) {
      assertArrayEquals(new byte[] {1, 2}, rv.broadcast(new byte[] {1, 2}));
      assertEquals(1, rv.allGather(new byte[] {3}).size());
    }
  }

  @Test
  void aRankThatNeverJoinsIsNamedOnEveryRankWithinTheJoinTimeout() {
    int port = Ports.free();
    Rendezvous.Options o = FAST.withJoinTimeout(Duration.ofMillis(1500));
    long t0 = System.nanoTime();
    List<Object> results = ranks(3, rank -> {
      if (rank == 2) {
        return null; // never comes
      }
      return Rendezvous.join(rank, 4, HOST, port, o);
    });
    double seconds = (System.nanoTime() - t0) / 1e9;
    assertMentions(messageOf(results.get(0)), "ranks [2, 3] never joined", "within the join timeout of PT1.5S",
        "joined: ranks [0, 1] of 4");
    assertMentions(messageOf(results.get(1)), "rank 0 (127.0.0.1:" + port + ") reports: ranks [2, 3] never joined");
    assertTrue(seconds < 1.5 + 3, "took " + seconds + " s");
  }

  @Test
  void wrongSecretIsRejectedAndTheRightRanksStillJoin() {
    int port = Ports.free();
    Rendezvous.Options good = FAST.withSecret("right");
    List<Object> results = ranks(4, rank -> {
      if (rank == 3) { // an intruder with another secret, claiming rank 1
        Thread.sleep(100);
        return Rendezvous.join(1, 3, HOST, port, FAST.withSecret("wrong"));
      }
      if (rank == 1) {
        Thread.sleep(400);
      }
      try (Rendezvous rv = Rendezvous.join(rank, 3, HOST, port, good)) {
        List<byte[]> all = rv.allGather(new byte[] {(byte) rank});
        return all.size() + ":" + rv.rejectedConnections();
      }
    });
    assertEquals("3:1", results.get(0));
    assertEquals("3:0", results.get(1));
    assertMentions(messageOf(results.get(3)), "rank 1: rank 0 (127.0.0.1:" + port + ") rejected it",
        "HELLO frame failed authentication");
  }

  @Test
  void aSecretOnOneSideOnlyIsNamed() {
    int port = Ports.free();
    List<Object> results = ranks(2, rank -> Rendezvous.join(rank, 2, HOST, port,
        rank == 0 ? FAST.withSecret("x").withJoinTimeout(Duration.ofSeconds(1)) : FAST));
    assertMentions(messageOf(results.get(1)), "rank 0 requires authenticated frames (COMMPLAN_RENDEZVOUS_SECRET is set"
        + " there) but it is not set here");
    assertMentions(messageOf(results.get(0)), "rank 1 never joined");
  }

  @Test
  void aDifferentSizeAndADuplicateRankAreRejectedWithReasons() {
    int port = Ports.free();
    List<Object> results = ranks(4, rank -> {
      switch (rank) {
        case 2 -> {
          Thread.sleep(50);
          return Rendezvous.join(1, 5, HOST, port, FAST); // wrong size
        }
        case 3 -> {
          Thread.sleep(300);
          return Rendezvous.join(1, 3, HOST, port, FAST); // rank 1 again
        }
        default -> {
          Rendezvous rv = Rendezvous.join(rank, 3, HOST, port, FAST.withJoinTimeout(Duration.ofSeconds(2)));
          rv.close();
          return rv;
        }
      }
    });
    assertMentions(messageOf(results.get(2)), "rank 1 has a job size of 5", "is for 3 ranks");
    assertMentions(messageOf(results.get(3)), "rank 1 has already joined; two processes claim rank 1");
    assertMentions(messageOf(results.get(0)), "rank 2 never joined");
  }

  @Test
  void differentOperationsOnTwoRanksFailEveryRankNamingThem() {
    int port = Ports.free();
    List<Object> results = ranks(3, rank -> {
      try (Rendezvous rv = Rendezvous.join(rank, 3, HOST, port, FAST)) {
        if (rank == 2) {
          rv.broadcast(null);
        }
        return rv.allGather(new byte[] {1});
      }
    });
    // rank 2 waits for a broadcast result and gets rank 0's error about its all-gather
    assertMentions(messageOf(results.get(0)), "allGather #1");
    assertMentions(messageOf(results.get(1)), "rank 0 (127.0.0.1:" + port + ") reports");
    assertMentions(messageOf(results.get(2)), "rank 0 (127.0.0.1:" + port + ") reports");
  }

  @Test
  void aRankThatLeavesMidExchangeFailsTheOthersNamingIt() {
    int port = Ports.free();
    long t0 = System.nanoTime();
    List<Object> results = ranks(3, rank -> {
      Rendezvous rv = Rendezvous.join(rank, 3, HOST, port, FAST.withOpTimeout(Duration.ofSeconds(20)));
      if (rank == 1) {
        rv.close(); // as if its process died: the connection closes
        return null;
      }
      try (rv) {
        return rv.allGather(new byte[] {(byte) rank});
      }
    });
    assertTrue((System.nanoTime() - t0) / 1e9 < 10, "failed at once, not at the 20 s deadline");
    assertMentions(messageOf(results.get(0)), "rank 1 closed its connection (did its process exit?) during allGather #1");
    assertMentions(messageOf(results.get(2)), "reports: rank 1 closed its connection");
  }

  @Test
  void aSilentRankFailsTheOperationAtItsDeadlineNamingIt() {
    int port = Ports.free();
    List<Object> results = ranks(3, rank -> {
      try (Rendezvous rv = Rendezvous.join(rank, 3, HOST, port, FAST.withOpTimeout(Duration.ofMillis(800)))) {
        if (rank == 2) {
          Thread.sleep(3000);
          return null;
        }
        return rv.allGather(new byte[] {(byte) rank});
      }
    });
    assertMentions(messageOf(results.get(0)), "rank 2 sent nothing for allGather #1 within PT0.8S");
    assertMentions(messageOf(results.get(1)), "reports: rank 2 sent nothing");
  }

  @Test
  void abortTellsTheOthers() {
    int port = Ports.free();
    List<Object> results = ranks(3, rank -> {
      Rendezvous rv = Rendezvous.join(rank, 3, HOST, port, FAST);
      if (rank == 0) {
        rv.abort("no NCCL here");
        return null;
      }
      return rv.broadcast(null);
    });
    assertMentions(messageOf(results.get(1)), "rank 0 aborted: no NCCL here");
    assertMentions(messageOf(results.get(2)), "rank 0 aborted: no NCCL here");
  }

  @Test
  void noRankZeroMeansAJoinTimeoutNamingTheAddress() {
    int port = Ports.free();
    String m = assertThrows(RendezvousException.class,
        () -> Rendezvous.join(1, 2, HOST, port, FAST.withJoinTimeout(Duration.ofMillis(600)))).getMessage();
    assertMentions(m, "rank 1 could not join the rendezvous at 127.0.0.1:" + port, "within the join timeout of PT0.6S",
        "MASTER_ADDR/MASTER_PORT");
  }

  @Test
  void oversizedContributionsAreRefusedBeforeSending() {
    int port = Ports.free();
    List<Object> results = ranks(2, rank -> {
      try (Rendezvous rv = Rendezvous.join(rank, 2, HOST, port, FAST.withMaxPayload(4096))) {
        return rv.allGather(new byte[rank == 1 ? 8192 : 1]);
      }
    });
    assertMentions(assertInstanceOf(IllegalArgumentException.class, results.get(1)).getMessage(), "above the cap of 4096");
    assertInstanceOf(RendezvousException.class, results.get(0));
  }
}
