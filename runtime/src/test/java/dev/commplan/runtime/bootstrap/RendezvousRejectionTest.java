package dev.commplan.runtime.bootstrap;

import static dev.commplan.runtime.bootstrap.RendezvousTest.FAST;
import static dev.commplan.runtime.bootstrap.RendezvousTest.HOST;
import static dev.commplan.runtime.bootstrap.RendezvousTest.assertMentions;
import static dev.commplan.runtime.bootstrap.RendezvousTest.messageOf;
import static dev.commplan.runtime.bootstrap.RendezvousTest.ranks;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.text.MessageFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.ResourceBundle;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Rejected connections (issue 20, item 5): a process that arrives after every rank joined is told why
 * (a second process claiming a rank hears "two processes claim rank N", anything else that the
 * rendezvous of this job has closed), late handshakes are bounded, a rank that left and starts the next
 * rendezvous on the port is not called a duplicate, and rank 0 logs one line per rejected peer with its
 * address and the reason, never the secret.
 */
class RendezvousRejectionTest {
  /** A System.Logger that keeps its lines: injected into rank 0, so nothing global is touched. */
  static final class CapturingLogger implements System.Logger {
    final List<String> lines = new CopyOnWriteArrayList<>();

    @Override
    public String getName() {
      return RejectionLog.LOGGER;
    }

    @Override
    public boolean isLoggable(Level level) {
      return true;
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
      lines.add(level + " " + msg + (thrown == null ? "" : " " + thrown));
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
      lines.add(level + " " + (params == null || params.length == 0 ? format : MessageFormat.format(format, params)));
    }

    List<String> rejections() {
      return lines.stream().filter(l -> l.contains("rejected a connection from")).toList();
    }
  }

  @Test
  void aLateSecondProcessClaimingAJoinedRankIsToldTwoProcessesClaimIt() {
    int port = Ports.free();
    CountDownLatch joined = new CountDownLatch(3);
    CountDownLatch lateDone = new CountDownLatch(1);
    List<Object> results = ranks(4, rank -> {
      if (rank == 3) { // a second process with RANK=1, started after every rank joined
        joined.await();
        try {
          return Rendezvous.join(1, 3, HOST, port, FAST);
        } finally {
          lateDone.countDown();
        }
      }
      try (Rendezvous rv = Rendezvous.join(rank, 3, HOST, port, FAST)) {
        joined.countDown();
        lateDone.await();
        return rv.allGather(new byte[] {(byte) rank}).size(); // the rendezvous still works
      }
    });
    String m = messageOf(results.get(3));
    assertMentions(m, "rank 1: rank 0 (127.0.0.1:" + port + ") rejected it",
        "rank 1 has already joined; two processes claim rank 1 (check RANK on every process)",
        "the rendezvous of this job has closed (all 3 ranks joined at 20");
    assertFalse(m.contains("Connection refused"), m);
    assertEquals(List.of(3, 3, 3), results.subList(0, 3));
  }

  @Test
  void aLateConnectionRejectedForAnotherReasonIsToldTheRendezvousHasClosed() {
    int port = Ports.free();
    CountDownLatch joined = new CountDownLatch(2);
    CountDownLatch lateDone = new CountDownLatch(1);
    Rendezvous.Options good = FAST.withSecret("right");
    List<Object> results = ranks(3, rank -> {
      if (rank == 2) { // a process of another job (another secret) on this port, after the join
        joined.await();
        try {
          return Rendezvous.join(1, 2, HOST, port, FAST.withSecret("wrong"));
        } finally {
          lateDone.countDown();
        }
      }
      try (Rendezvous rv = Rendezvous.join(rank, 2, HOST, port, good)) {
        joined.countDown();
        lateDone.await();
        rv.barrier();
        return "ok";
      }
    });
    assertMentions(messageOf(results.get(2)), "HELLO frame failed authentication",
        "the rendezvous of this job has closed (all 2 ranks joined at");
    assertEquals(List.of("ok", "ok"), results.subList(0, 2));
  }

  @Test
  void lateHandshakesAreBoundedAndThoseBeyondAreAnsweredAtOnce() throws Exception {
    int port = Ports.free();
    Rendezvous.Options o = FAST.withHandshakeTimeout(Duration.ofMillis(1500));
    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
      List<Socket> stalled = new ArrayList<>();
      try {
        Future<Rendezvous> one = pool.submit(() -> Rendezvous.join(1, 2, HOST, port, o));
        try (Rendezvous zero = Rendezvous.join(0, 2, HOST, port, o, new CapturingLogger()); Rendezvous r1 = one.get()) {
          for (int i = 0; i < Admission.LATE_HANDSHAKES; i++) { // each holds a late handshake open
            Socket s = new Socket();
            s.connect(new InetSocketAddress(HOST, port), 2000);
            s.setSoTimeout(5000);
            readFrame(s.getInputStream()); // its CHALLENGE: the handshake has started
            stalled.add(s);
          }
          long t0 = System.nanoTime();
          String beyond = assertThrows(RendezvousException.class, () -> Rendezvous.join(1, 2, HOST, port, o)).getMessage();
          assertMentions(beyond, "the rendezvous at 127.0.0.1:" + port + " refused it",
              "the rendezvous of this job has closed (all 2 ranks joined at", "answered without a handshake");
          assertTrue((System.nanoTime() - t0) / 1e9 < 1, "answered at once");
          for (Socket s : stalled) { // each closed at its handshake timeout
            assertEquals(-1, drain(s.getInputStream()));
          }
          // the bound is free again: a full answer
          assertMentions(assertThrows(RendezvousException.class, () -> Rendezvous.join(1, 2, HOST, port, o)).getMessage(),
              "two processes claim rank 1");
          Future<?> other = pool.submit(() -> {
            r1.barrier();
            return null;
          });
          zero.barrier(); // the joined ranks were not disturbed
          other.get();
        }
      } finally {
        for (Socket s : stalled) {
          s.close();
        }
        pool.shutdownNow();
      }
    });
  }

  @Test
  void aRankThatLeftAndStartsTheNextRendezvousOnThePortIsNotCalledADuplicate() {
    int port = Ports.free();
    List<Object> results = ranks(2, rank -> {
      Rendezvous first = Rendezvous.join(rank, 2, HOST, port, FAST);
      first.barrier();
      if (rank == 0) {
        Thread.sleep(500); // rank 1 leaves and comes back while rank 0 still holds the first one open
      }
      first.close();
      try (Rendezvous second = Rendezvous.join(rank, 2, HOST, port, FAST)) {
        return second.allGather(new byte[] {(byte) rank}).size();
      }
    });
    assertEquals(List.of(2, 2), results);
  }

  @Test
  void rankZeroLogsOneLinePerRejectedPeerWithItsAddressAndTheReasonButNeverTheSecret() throws Exception {
    int port = Ports.free();
    String secret = "do-not-log-this-secret";
    Rendezvous.Options o = FAST.withSecret(secret);
    CapturingLogger log = new CapturingLogger();
    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
      try {
        Future<Rendezvous> zero = pool.submit(() -> Rendezvous.join(0, 3, HOST, port, o, log));
        // during the join: a wrong secret, another job size (that client hangs up), garbage
        assertThrows(RendezvousException.class, () -> Rendezvous.join(2, 3, HOST, port, FAST.withSecret("wrong")));
        assertThrows(RendezvousException.class, () -> Rendezvous.join(2, 4, HOST, port, o));
        try (Socket s = connect(port)) {
          readFrame(s.getInputStream());
          OutputStream out = s.getOutputStream();
          out.write("GET / HTTP/1.1\r\nHost: rank0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          out.flush();
          drain(s.getInputStream()); // rank 0 answers and closes once it has logged
        }
        Future<Rendezvous> one = pool.submit(() -> Rendezvous.join(1, 3, HOST, port, o));
        try (Rendezvous two = Rendezvous.join(2, 3, HOST, port, o); Rendezvous r1 = one.get(); Rendezvous r0 = zero.get()) {
          // after the join: a second process claiming rank 2
          assertThrows(RendezvousException.class, () -> Rendezvous.join(2, 3, HOST, port, o));
          assertEquals(3, r0.rejectedConnections(), "the three during the join");
        }
      } finally {
        pool.shutdownNow();
      }
    });
    List<String> lines = log.rejections();
    assertEquals(4, lines.size(), String.join("\n", log.lines));
    assertOneMentions(lines, "HELLO frame failed authentication");
    assertOneMentions(lines, "closed the connection without a complete HELLO");
    assertOneMentions(lines, "bad magic 0x47455420");
    assertOneMentions(lines, "two processes claim rank 2", "the rendezvous of this job has closed");
    byte[] key = Authentication.of(secret.getBytes(StandardCharsets.UTF_8)).helloKey();
    for (String line : log.lines) {
      assertTrue(line.startsWith("WARNING rendezvous at 127.0.0.1:" + port + ": rank 0 rejected a connection from 127.0.0.1:"),
          line);
      for (String leak : List.of(secret, HexFormat.of().formatHex(key), Base64.getEncoder().encodeToString(key))) {
        assertFalse(line.contains(leak), "a log line holds secret material: " + line);
      }
    }
  }

  @Test
  void aFloodOfRejectionsIsLoggedUpToTheBoundThenCounted() throws Exception {
    int port = Ports.free();
    CapturingLogger log = new CapturingLogger();
    int flood = RejectionLog.MAX_LINES + 20;
    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
      try {
        Future<Rendezvous> zero = pool.submit(() -> Rendezvous.join(0, 2, HOST, port, FAST, log));
        for (int i = 0; i < flood; i++) {
          try (Socket s = connect(port)) {
            readFrame(s.getInputStream());
            s.getOutputStream().write(new byte[Wire.HEADER_BYTES]); // bad magic
            drain(s.getInputStream());
          }
        }
        try (Rendezvous one = Rendezvous.join(1, 2, HOST, port, FAST); Rendezvous r0 = zero.get()) {
          Future<?> other = pool.submit(() -> {
            one.barrier();
            return null;
          });
          r0.barrier();
          other.get();
          assertEquals(flood, r0.rejectedConnections());
        }
      } finally {
        pool.shutdownNow();
      }
    });
    assertEquals(RejectionLog.MAX_LINES, log.rejections().size());
    assertMentions(log.rejections().getLast(), "further ones are only counted");
    assertEquals(RejectionLog.MAX_LINES + 1, log.lines.size(), String.join("\n", log.lines));
    assertMentions(log.lines.getLast(), "rank 0 rejected 20 more connections than it logged (" + flood + " in all)");
  }

  private static void assertOneMentions(List<String> lines, String... parts) {
    assertEquals(1, lines.stream().filter(l -> List.of(parts).stream().allMatch(l::contains)).count(),
        () -> List.of(parts) + " in exactly one of: " + String.join("\n", lines));
  }

  /** A connection to rank 0, retrying while it does not listen yet. */
  private static Socket connect(int port) throws Exception {
    for (int attempt = 0; ; attempt++) {
      Socket s = new Socket();
      try {
        s.connect(new InetSocketAddress(HOST, port), 2000);
        s.setSoTimeout(5000);
        return s;
      } catch (java.net.ConnectException e) {
        s.close();
        if (attempt == 200) {
          throw e;
        }
        Thread.sleep(20);
      }
    }
  }

  private static void readFrame(InputStream in) throws IOException {
    byte[] header = in.readNBytes(Wire.HEADER_BYTES);
    int len = java.nio.ByteBuffer.wrap(header).getInt(Wire.HEADER_BYTES - 4);
    in.readNBytes(len);
  }

  /** Reads until the peer closes; -1. */
  private static int drain(InputStream in) throws IOException {
    while (in.read() >= 0) {
      // an ERROR frame may come first
    }
    return -1;
  }
}
