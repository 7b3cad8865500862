package dev.commplan.runtime.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Bad frames against a live rendezvous (rank 0 and the good ranks as threads): at least 10,000
 * connections sending wrong-secret, untagged, truncated, oversized, garbage, wrong-magic/version,
 * replayed, bit-flipped, wrong-type/rank/size/sequence and duplicate-rank hellos. Each must be rejected
 * (rank 0 closes that connection), and the rendezvous must still complete for the good ranks. Then
 * 10,000 mutations of authenticated session frames against the decoder.
 */
class RendezvousFuzzTest {
  private static final long SEED = 0xf0221eL;
  private static final int CONNECTIONS = 10_000;
  private static final String SECRET = "fuzz-secret";
  private static final byte[] KEY = SECRET.getBytes(StandardCharsets.UTF_8);
  private static final byte[] HELLO_KEY = Authentication.derive(KEY, "hello");

  enum Attack {
    WRONG_SECRET, NO_TAG, TRUNCATED, STALLED, OVERSIZED, GARBAGE, BAD_MAGIC, BAD_VERSION, REPLAY, BIT_FLIP,
    WRONG_TYPE, BAD_RANK, WRONG_SIZE, BAD_SEQUENCE, DUPLICATE
  }

  private static byte[] hello(int rank, int size, byte[] serverNonce, byte[] key, byte type, int seq, Random random) {
    byte[] clientNonce = new byte[Wire.NONCE_BYTES];
    random.nextBytes(clientNonce);
    byte[] payload = ByteBuffer.allocate(2 * Wire.NONCE_BYTES + 4).put(clientNonce).put(serverNonce).putInt(size).array();
    return Wire.encode(type, (byte) 0, rank, seq, payload, key);
  }

  /** One bad connection; true if rank 0 answered the connection and then closed it. */
  private static boolean attack(int port, Attack attack, Random random, AtomicReference<byte[]> staleNonce)
      throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(RendezvousTest.HOST, port), 5000);
      s.setSoTimeout(5000);
      InputStream in = s.getInputStream();
      OutputStream out = s.getOutputStream();
      byte[] header = in.readNBytes(Wire.HEADER_BYTES);
      int len = ByteBuffer.wrap(header).getInt(Wire.HEADER_BYTES - 4);
      byte[] challenge = in.readNBytes(len);
      byte[] nonce = Arrays.copyOf(challenge, Wire.NONCE_BYTES);
      byte[] stale = staleNonce.getAndSet(nonce);
      byte[] frame = switch (attack) {
        case WRONG_SECRET -> hello(2, 3, nonce, Authentication.derive("not-it".getBytes(StandardCharsets.UTF_8), "hello"),
            Wire.HELLO, 0, random);
        case NO_TAG -> hello(2, 3, nonce, null, Wire.HELLO, 0, random);
        case TRUNCATED, STALLED -> {
          byte[] h = hello(2, 3, nonce, HELLO_KEY, Wire.HELLO, 0, random);
          yield Arrays.copyOf(h, random.nextInt(h.length));
        }
        case OVERSIZED -> {
          byte[] h = hello(2, 3, nonce, HELLO_KEY, Wire.HELLO, 0, random);
          int big = random.nextBoolean() ? Wire.HANDSHAKE_CAP + 1 + random.nextInt(Integer.MAX_VALUE - Wire.HANDSHAKE_CAP - 1)
              : -1 - random.nextInt(Integer.MAX_VALUE);
          ByteBuffer.wrap(h).putInt(Wire.HEADER_BYTES - 4, big);
          yield h;
        }
        case GARBAGE -> {
          byte[] g = new byte[1 + random.nextInt(300)];
          random.nextBytes(g);
          yield g;
        }
        case BAD_MAGIC -> {
          byte[] h = hello(2, 3, nonce, HELLO_KEY, Wire.HELLO, 0, random);
          h[random.nextInt(4)] ^= (byte) (1 + random.nextInt(255));
          yield h;
        }
        case BAD_VERSION -> {
          byte[] h = hello(2, 3, nonce, HELLO_KEY, Wire.HELLO, 0, random);
          h[4] = (byte) (2 + random.nextInt(250));
          yield h;
        }
        case REPLAY -> hello(2, 3, stale == null ? new byte[Wire.NONCE_BYTES] : stale, HELLO_KEY, Wire.HELLO, 0, random);
        case BIT_FLIP -> {
          byte[] h = hello(2, 3, nonce, HELLO_KEY, Wire.HELLO, 0, random);
          int bit = random.nextInt(h.length * 8);
          h[bit / 8] ^= (byte) (1 << (bit % 8));
          yield h;
        }
        case WRONG_TYPE -> hello(2, 3, nonce, HELLO_KEY, (byte) (Wire.WELCOME + random.nextInt(5)), 0, random);
        case BAD_RANK -> hello(List.of(0, 3, -1, 1 << 20).get(random.nextInt(4)), 3, nonce, HELLO_KEY, Wire.HELLO, 0,
            random);
        case WRONG_SIZE -> hello(2, 4 + random.nextInt(10), nonce, HELLO_KEY, Wire.HELLO, 0, random);
        case BAD_SEQUENCE -> hello(2, 3, nonce, HELLO_KEY, Wire.HELLO, 1 + random.nextInt(100), random);
        case DUPLICATE -> hello(1, 3, nonce, HELLO_KEY, Wire.HELLO, 0, random); // rank 1 has joined already
      };
      out.write(frame);
      out.flush();
      if (attack != Attack.STALLED) {
        s.shutdownOutput();
      }
      try {
        while (in.read() >= 0) {
          // an ERROR frame may come first; then the close
        }
        return true;
      } catch (SocketTimeoutException e) {
        return false; // rank 0 neither rejected nor closed within 5 s
      }
    }
  }

  @Test
  void tenThousandBadConnectionsAreRejectedAndTheGoodRanksStillComplete() {
    int port = Ports.free();
    Rendezvous.Options options = new Rendezvous.Options(Duration.ofSeconds(90), Duration.ofSeconds(10),
        Duration.ofMillis(300), 1 << 20, KEY);
    Map<Attack, AtomicInteger> sent = new EnumMap<>(Attack.class);
    for (Attack a : Attack.values()) {
      sent.put(a, new AtomicInteger());
    }
    Map<String, Boolean> notClosed = new ConcurrentHashMap<>();
    long t0 = System.nanoTime();
    assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
      ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();
      try {
        Future<String> rank0 = pool.submit(() -> {
          try (Rendezvous rv = Rendezvous.join(0, 3, RendezvousTest.HOST, port, options)) {
            List<byte[]> all = rv.allGather(new byte[] {10});
            byte[] b = rv.broadcast(new byte[] {42, 43});
            return all.size() + " " + b.length + " " + rv.rejectedConnections();
          }
        });
        Thread.sleep(200);
        Future<List<byte[]>> rank1 = null;
        AtomicInteger done = new AtomicInteger();
        int workers = 8;
        Future<?>[] fs = new Future<?>[workers];
        AtomicReference<byte[]> staleNonce = new AtomicReference<>();
        for (int w = 0; w < workers; w++) {
          Random random = new Random(SEED + w);
          fs[w] = pool.submit(() -> {
            int n;
            while ((n = done.getAndIncrement()) < CONNECTIONS) {
              Attack a;
              do {
                a = Attack.values()[random.nextInt(Attack.values().length)];
              } while ((a == Attack.DUPLICATE && n < CONNECTIONS / 2) || (a == Attack.STALLED && random.nextInt(10) != 0));
              if (!attack(port, a, random, staleNonce)) {
                notClosed.put(n + " " + a, true);
              }
              sent.get(a).incrementAndGet();
            }
            return null;
          });
          if (w == workers - 1) {
            while (done.get() < CONNECTIONS / 2 - 1000) {
              Thread.sleep(10);
            }
          }
        }
        // rank 1 joins in the middle of the attacks (before any DUPLICATE is sent)
        while (done.get() < CONNECTIONS / 3) {
          Thread.sleep(5);
        }
        rank1 = pool.submit(() -> {
          try (Rendezvous rv = Rendezvous.join(1, 3, RendezvousTest.HOST, port, options)) {
            List<byte[]> all = rv.allGather(new byte[] {11});
            rv.broadcast(null);
            return all;
          }
        });
        for (Future<?> f : fs) {
          f.get();
        }
        // rank 2 joins after every attack
        List<byte[]> two;
        try (Rendezvous rv = Rendezvous.join(2, 3, RendezvousTest.HOST, port, options)) {
          two = rv.allGather(new byte[] {12});
          assertArrayEquals(new byte[] {42, 43}, rv.broadcast(null));
        }
        assertArrayEquals(new byte[] {10}, two.get(0));
        assertArrayEquals(new byte[] {11}, rank1.get().get(1));
        assertArrayEquals(new byte[] {12}, two.get(2));
        String summary = rank0.get();
        int total = sent.values().stream().mapToInt(AtomicInteger::get).sum();
        assertEquals("3 2 " + total, summary, "every bad connection rejected exactly once");
      } finally {
        pool.shutdownNow();
      }
    });
    int total = sent.values().stream().mapToInt(AtomicInteger::get).sum();
    System.out.printf("RendezvousFuzzTest: %d bad connections %s, all rejected (%d not closed), good ranks completed,"
        + " %.1f s%n", total, sent, notClosed.size(), (System.nanoTime() - t0) / 1e9);
    assertTrue(total >= CONNECTIONS);
    assertTrue(notClosed.isEmpty(), "connections rank 0 did not close: " + notClosed.keySet());
  }

  @Test
  void tenThousandAlteredSessionFramesAreRejectedByTheDecoder() throws IOException {
    Random random = new Random(SEED);
    byte[] key = Authentication.derive(KEY, "c2s", new byte[16], new byte[16], new byte[4]);
    int rejected = 0;
    Map<String, Integer> reasons = new java.util.TreeMap<>();
    for (int i = 0; i < 10_000; i++) {
      byte[] payload = new byte[random.nextInt(200)];
      random.nextBytes(payload);
      byte[] good = Wire.encode(Wire.DATA, (byte) 0, 1, 1 + random.nextInt(100), payload, key);
      Wire.Frame back = Wire.read(null, new ByteArrayInputStream(good), Long.MAX_VALUE, 4096, key);
      assertArrayEquals(payload, back.payload());
      byte[] bad = switch (i % 5) {
        case 0 -> { // one bit
          byte[] b = good.clone();
          int bit = random.nextInt(b.length * 8);
          b[bit / 8] ^= (byte) (1 << (bit % 8));
          yield b;
        }
        case 1 -> Arrays.copyOf(good, random.nextInt(good.length)); // truncated
        case 2 -> { // one byte replaced by a different one
          byte[] b = good.clone();
          int at = random.nextInt(b.length);
          b[at] = (byte) (b[at] + 1 + random.nextInt(255));
          yield b;
        }
        case 3 -> Wire.encode(Wire.DATA, (byte) 0, 1, 1, payload, Authentication.derive(KEY, "s2c", new byte[16], new byte[16],
            new byte[4])); // the other direction's key: a reflected frame
        default -> Wire.encode(Wire.DATA, (byte) 0, 1, 1, payload, null); // untagged
      };
      try {
        Wire.read(null, new ByteArrayInputStream(bad), Long.MAX_VALUE, 4096, key);
      } catch (FrameException | EOFException e) {
        rejected++;
        String m = e.getMessage();
        reasons.merge(m.length() > 40 ? m.substring(0, 40) : m, 1, Integer::sum);
        continue;
      }
      throw new AssertionError("altered frame " + i + " (kind " + (i % 5) + ") accepted");
    }
    assertEquals(10_000, rejected);
    System.out.println("RendezvousFuzzTest: 10000 altered session frames rejected: " + reasons.size() + " reasons");
  }
}
