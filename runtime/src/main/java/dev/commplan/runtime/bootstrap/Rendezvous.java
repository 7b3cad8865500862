package dev.commplan.runtime.bootstrap;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small TCP rendezvous for the processes of one job, to pass an NCCL unique id (and other small data,
 * such as plan fingerprints) before any communicator exists. Rank 0 listens on the port; the others
 * connect to it (retrying with backoff until the join timeout) and talk only to it.
 *
 * <p><b>Protocol.</b> Frames of fixed binary fields and byte arrays (magic {@code CPRV}, version, type,
 * flags, rank, sequence, length, payload, optional tag); nothing a peer sends is deserialized as Java
 * objects. A length above the cap is refused before anything is allocated: {@link Options#maxPayload}
 * once joined, 1 KiB before. Every read has a deadline (the socket timeout is set to what is left of
 * it). On connecting, rank 0 sends a challenge (a fresh random nonce); the joining rank answers with its
 * rank, the job's size, its own nonce and the echoed challenge. Rank 0 refuses (and closes that
 * connection only, keeping on serving the others) any frame that breaks the protocol, a rank out of
 * range, a size that differs, a rank already joined, or a reply that does not echo its challenge.
 *
 * <p><b>Authentication</b>, when a shared secret is set ({@link #SECRET_ENV}, or {@link
 * Options#withSecret}): every frame but the challenge carries an HMAC-SHA256 tag, compared in constant
 * time. The hello is tagged with a key derived from the secret and covers the challenge, so an old hello
 * replayed on a new connection fails; after it, each direction of each connection has its own key
 * derived from the secret and both nonces, and its own sequence numbers, so frames cannot be replayed
 * across connections, reflected, reordered or repeated. What it does not do: encrypt (anyone on the path
 * can read the unique id), distribute the secret (that is the user's job), or protect NCCL's own
 * traffic, which is unauthenticated. Without a secret nothing is authenticated.
 *
 * <p><b>Operations</b> (collective: every rank calls them in the same order): {@link #broadcast},
 * {@link #allGather}, {@link #barrier}. Each has a deadline ({@link Options#opTimeout} on rank 0; the
 * others wait up to twice it, at most 10 s more, so that rank 0's report arrives first); a peer that
 * closes its connection or sends nothing in time fails the operation on rank 0 naming it, and rank 0
 * tells the other ranks, which fail with that reason. After a failure the rendezvous is unusable.
 *
 * <p>Used by one thread.
 */
public final class Rendezvous implements AutoCloseable {
  /** The environment variable holding the shared secret (UTF-8); unset means no authentication. */
  public static final String SECRET_ENV = "COMMPLAN_RENDEZVOUS_SECRET";

  /** The default cap on an operation's payload once joined: 16 MiB. */
  public static final int DEFAULT_MAX_PAYLOAD = 16 << 20;

  private static final byte OP_BROADCAST = 1;
  private static final byte OP_ALL_GATHER = 2;

  /**
   * How the rendezvous behaves.
   *
   * @param joinTimeout how long {@link #join} waits for every rank (rank 0) or for rank 0 (the others)
   * @param opTimeout the deadline of each operation
   * @param handshakeTimeout how long rank 0 gives one connection to complete its hello
   * @param maxPayload the cap on one frame's payload once joined (an all-gather's result included)
   * @param secret the shared secret, or null for none
   */
  public record Options(Duration joinTimeout, Duration opTimeout, Duration handshakeTimeout, int maxPayload,
      byte[] secret) {
    public Options {
      requirePositive(joinTimeout, "joinTimeout");
      requirePositive(opTimeout, "opTimeout");
      requirePositive(handshakeTimeout, "handshakeTimeout");
      if (maxPayload < 1024) {
        throw new IllegalArgumentException("maxPayload must be >= 1024 bytes, was " + maxPayload);
      }
      if (secret != null && secret.length == 0) {
        throw new IllegalArgumentException("the rendezvous secret is empty: set a non-empty " + SECRET_ENV
            + ", or unset it for no authentication");
      }
      secret = secret == null ? null : secret.clone();
    }

    /**
     * Join and operation timeouts of 5 minutes, a 10-second handshake, a 16 MiB cap, and the secret from
     * {@value #SECRET_ENV} when it is set.
     */
    public static Options defaults() {
      String s = System.getenv(SECRET_ENV);
      return new Options(Duration.ofMinutes(5), Duration.ofMinutes(5), Duration.ofSeconds(10), DEFAULT_MAX_PAYLOAD,
          s == null ? null : s.getBytes(StandardCharsets.UTF_8));
    }

    public Options withJoinTimeout(Duration d) {
      return new Options(d, opTimeout, handshakeTimeout, maxPayload, secret);
    }

    public Options withOpTimeout(Duration d) {
      return new Options(joinTimeout, d, handshakeTimeout, maxPayload, secret);
    }

    public Options withHandshakeTimeout(Duration d) {
      return new Options(joinTimeout, opTimeout, d, maxPayload, secret);
    }

    public Options withMaxPayload(int bytes) {
      return new Options(joinTimeout, opTimeout, handshakeTimeout, bytes, secret);
    }

    /** With {@code secret} (UTF-8), or none when null. */
    public Options withSecret(String s) {
      return new Options(joinTimeout, opTimeout, handshakeTimeout, maxPayload,
          s == null ? null : s.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public byte[] secret() {
      return secret == null ? null : secret.clone();
    }

    @Override
    public String toString() {
      return "Options[join " + joinTimeout + ", op " + opTimeout + ", handshake " + handshakeTimeout + ", cap "
          + maxPayload + " B, " + (secret == null ? "no secret" : "secret set") + "]";
    }

    private static void requirePositive(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, was " + d);
      }
    }
  }

  private final int rank;
  private final int size;
  private final String where; // host:port, for messages
  private final Options options;
  private final RendezvousServer server; // rank 0 of several ranks
  private final Link root; // the other ranks: the link to rank 0
  private int ops;
  private volatile boolean closed;
  private String broken;

  private Rendezvous(int rank, int size, String where, Options options, RendezvousServer server, Link root) {
    this.rank = rank;
    this.size = size;
    this.where = where;
    this.options = options;
    this.server = server;
    this.root = root;
  }

  /** Joins the job {@code info} describes ({@link LaunchEnvironment#fromEnvironment()}). */
  public static Rendezvous join(ProcessInfo info, Options options) {
    return join(info.rank(), info.size(), info.masterAddr(), info.masterPort(), options);
  }

  /**
   * Joins: rank 0 listens on {@code port} and waits for every other rank; the others connect to {@code
   * host:port} and wait until every rank has joined.
   *
   * @param host rank 0's host as the others reach it; on rank 0, a loopback host makes it listen on
   *     loopback only, anything else on every interface
   * @throws RendezvousException if the join timeout passes (naming the ranks that never came), rank 0
   *     rejects this rank (with its reason), or the ranks disagree on the size or the secret
   */
  public static Rendezvous join(int rank, int size, String host, int port, Options options) {
    Objects.requireNonNull(options, "options");
    if (size < 1 || rank < 0 || rank >= size) {
      throw new IllegalArgumentException("rank " + rank + " is not in [0, " + size + ")");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " is not in [1, 65535]");
    }
    if (size > 1 && host == null) {
      throw new IllegalArgumentException("the rendezvous needs rank 0's host: set MASTER_ADDR (and MASTER_PORT) on"
          + " every rank, or pass it explicitly");
    }
    String where = (host == null ? "127.0.0.1" : host) + ":" + port;
    if (size == 1) {
      return new Rendezvous(0, 1, where, options, null, null);
    }
    if (rank == 0) {
      return new Rendezvous(0, size, where, options, RendezvousServer.serve(size, host, port, where, options), null);
    }
    Link toRankZero = RendezvousClient.connect(rank, size, host, port, where, options);
    return new Rendezvous(rank, size, where, options, null, toRankZero);
  }

  /** This process's rank. */
  public int rank() {
    return rank;
  }

  /** The number of ranks. */
  public int size() {
    return size;
  }

  /** How many connections rank 0 rejected during the join; 0 on other ranks. */
  public long rejectedConnections() {
    return server == null ? 0 : server.rejectedAtJoin();
  }

  // ---- Operations ---------------------------------------------------------------------------------

  /**
   * Rank 0's {@code data} on every rank: rank 0 passes it (up to the cap), the others pass anything
   * (ignored, may be null). Collective.
   *
   * @throws RendezvousException on a peer's failure or the operation deadline, naming the rank
   */
  public byte[] broadcast(byte[] data) {
    int op = begin("broadcast");
    if (size == 1) {
      return Objects.requireNonNull(data, "rank 0's data").clone();
    }
    if (rank == 0) {
      Objects.requireNonNull(data, "rank 0's data");
      checkSize(data.length, "broadcast");
      RendezvousServer.Event early = server.poll(); // a rank that failed or broke the protocol since the last operation
      if (early != null) {
        checkOp(early.frame() != null ? early.frame() : failedFrame(early), op, OP_BROADCAST, "broadcast", early.rank());
      }
      byte[] payload = opPayload(op, OP_BROADCAST, data);
      for (int r = 1; r < size; r++) {
        sendOrFail(r, Wire.RESULT, payload, "broadcast #" + op);
      }
      return data.clone();
    }
    return receiveResult(op, OP_BROADCAST, "broadcast", clientDeadline());
  }

  /**
   * Every rank's {@code data}, indexed by rank. Collective; contributions may differ in length (their
   * sum is capped by {@link Options#maxPayload}).
   *
   * @throws RendezvousException on a peer's failure or the operation deadline, naming the rank
   */
  public List<byte[]> allGather(byte[] data) {
    Objects.requireNonNull(data, "data");
    int op = begin("allGather");
    checkSize(data.length, "allGather");
    if (size == 1) {
      return List.of(data.clone());
    }
    long deadline = System.nanoTime() + options.opTimeout().toNanos();
    String name = "allGather #" + op;
    if (rank != 0) {
      try {
        root.send(Wire.DATA, opPayload(op, OP_ALL_GATHER, data), rank);
      } catch (IOException e) {
        throw fail("rank " + rank + " lost its connection to rank 0 (" + where + ") in " + name + ": " + e.getMessage(), e);
      }
      byte[] result = receiveResult(op, OP_ALL_GATHER, "allGather", clientDeadline());
      return unpack(result, name);
    }
    byte[][] parts = new byte[size][];
    parts[0] = data.clone();
    int have = 1;
    while (have < size) {
      RendezvousServer.Event e = nextEvent(deadline, name, parts);
      byte[] body = checkOp(e.frame(), op, OP_ALL_GATHER, "allGather", e.rank());
      if (parts[e.rank()] != null) {
        throw failAll("rank " + e.rank() + " sent two contributions to " + name, null);
      }
      parts[e.rank()] = body;
      have++;
    }
    long total = 4;
    for (byte[] p : parts) {
      total += 4 + p.length;
    }
    if (total > options.maxPayload()) {
      throw failAll(name + ": the gathered result would be " + total + " bytes, above the cap of " + options.maxPayload()
          + " (Options.withMaxPayload)", null);
    }
    ByteBuffer packed = ByteBuffer.allocate((int) total).putInt(size);
    for (byte[] p : parts) {
      packed.putInt(p.length).put(p);
    }
    byte[] payload = opPayload(op, OP_ALL_GATHER, packed.array());
    for (int r = 1; r < size; r++) {
      sendOrFail(r, Wire.RESULT, payload, name);
    }
    return List.of(parts);
  }

  /** Returns once every rank has called it. */
  public void barrier() {
    allGather(new byte[0]);
  }

  /**
   * Tells the other ranks this one failed ({@code reason}), so they fail at once rather than at their
   * deadline, and closes. Rank 0 tells everyone; another rank tells rank 0, which tells the rest at its
   * next operation.
   */
  public void abort(String reason) {
    if (!closed && broken == null) {
      byte[] message = cut("rank " + rank + " aborted: " + reason);
      if (server != null) {
        server.tellAll(message);
      } else if (root != null) {
        try {
          root.send(Wire.ERROR, message, rank);
        } catch (IOException ignored) {
          // it is going away anyway
        }
      }
      broken = "rank " + rank + " aborted: " + reason;
    }
    close();
  }

  /** Closes every connection; idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (server != null) {
      server.close();
    }
    if (root != null) {
      root.close();
    }
  }

  /**
   * A non-zero rank waits longer than rank 0 (up to twice the timeout, at most 10 s more), so that when a
   * rank is silent, rank 0's report naming it arrives before this rank's own deadline.
   */
  private long clientDeadline() {
    long t = options.opTimeout().toNanos();
    return System.nanoTime() + t + Math.min(t, Duration.ofSeconds(10).toNanos());
  }

  private int begin(String what) {
    if (closed) {
      throw new IllegalStateException("the rendezvous (rank " + rank + ") is closed; " + what + " needs an open one");
    }
    if (broken != null) {
      throw new RendezvousException("the rendezvous failed before (" + broken + "); " + what
          + " cannot run on it: start a new job");
    }
    return ++ops;
  }

  private void checkSize(int length, String what) {
    if (length > options.maxPayload() - 16) {
      throw new IllegalArgumentException(what + " of " + length + " bytes is above the cap of " + options.maxPayload()
          + " bytes (Options.withMaxPayload)");
    }
  }

  private static byte[] opPayload(int op, byte kind, byte[] data) {
    return ByteBuffer.allocate(5 + data.length).putInt(op).put(kind).put(data).array();
  }

  /** The body of an operation frame, after checking it is op {@code op} of kind {@code kind}. */
  private byte[] checkOp(Wire.Frame f, int op, byte kind, String what, int from) {
    if (f.type() == Wire.ERROR) {
      String reason = text(f.payload());
      throw from == 0 ? fail("rank 0 (" + where + ") reports: " + reason, null) : failAll(reason, null);
    }
    byte expected = rank == 0 ? Wire.DATA : Wire.RESULT;
    if (f.type() != expected || f.payload().length < 5) {
      throw failAll("rank " + from + " sent " + Wire.typeName(f.type()) + " (" + f.payload().length + " bytes) in "
          + what + " #" + op + "; the protocol expects " + Wire.typeName(expected), null);
    }
    ByteBuffer b = ByteBuffer.wrap(f.payload());
    int theirOp = b.getInt();
    byte theirKind = b.get();
    if (theirOp != op || theirKind != kind) {
      throw failAll("the ranks call different rendezvous operations: rank " + rank + " is in " + what + " #" + op
          + ", rank " + from + " in " + (theirKind == OP_BROADCAST ? "broadcast" : "allGather") + " #" + theirOp
          + "; every rank must call the same operations in the same order", null);
    }
    return Arrays.copyOfRange(f.payload(), 5, f.payload().length);
  }

  private byte[] receiveResult(int op, byte kind, String what, long deadline) {
    Wire.Frame f;
    try {
      f = root.receive(deadline, options.maxPayload() + 64);
    } catch (SocketTimeoutException e) {
      throw fail("rank " + rank + " got no " + what + " #" + op + " result from rank 0 (" + where + ") within "
          + options.opTimeout() + ": rank 0 or another rank is stuck or slow", e);
    } catch (EOFException | SocketException e) {
      throw fail("rank 0 (" + where + ") closed the connection during " + what + " #" + op
          + " (did its process exit? " + e.getMessage() + ")", e);
    } catch (IOException e) {
      throw fail("rank " + rank + ": " + what + " #" + op + " failed reading from rank 0 (" + where + "): "
          + e.getMessage(), e);
    }
    return checkOp(f, op, kind, what, 0);
  }

  private List<byte[]> unpack(byte[] result, String name) {
    try {
      ByteBuffer b = ByteBuffer.wrap(result);
      int n = b.getInt();
      if (n != size) {
        throw new FrameException("result for " + n + " ranks");
      }
      List<byte[]> out = new ArrayList<>(n);
      for (int r = 0; r < n; r++) {
        int len = b.getInt();
        if (len < 0 || len > b.remaining()) {
          throw new FrameException("contribution " + r + " of " + len + " bytes with " + b.remaining() + " left");
        }
        byte[] p = new byte[len];
        b.get(p);
        out.add(p);
      }
      if (b.hasRemaining()) {
        throw new FrameException(b.remaining() + " bytes after the last contribution");
      }
      return out;
    } catch (FrameException | java.nio.BufferUnderflowException e) {
      throw fail("rank 0 sent a malformed " + name + " result: " + e.getMessage(), e);
    }
  }

  private RendezvousServer.Event nextEvent(long deadline, String name, byte[][] parts) {
    try {
      RendezvousServer.Event e = server.poll(deadline - System.nanoTime());
      if (e == null) {
        List<Integer> silent = new ArrayList<>();
        for (int r = 1; r < size; r++) {
          if (parts[r] == null) {
            silent.add(r);
          }
        }
        throw failAll((silent.size() == 1 ? "rank " + silent.getFirst() : "ranks " + silent) + " sent nothing for " + name
            + " within " + options.opTimeout() + " (stuck, slow, or calling other operations)", null);
      }
      if (e.failure() != null) {
        throw failAll("rank " + e.rank() + " " + how(e.failure()) + " during " + name, e.failure());
      }
      return e;
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      throw failAll("rank 0 was interrupted in " + name, ie);
    }
  }

  /** Turns a reader's failure into the error it means for the operation. */
  private Wire.Frame failedFrame(RendezvousServer.Event e) {
    throw failAll("rank " + e.rank() + " " + how(e.failure()) + " before broadcast #" + ops, e.failure());
  }

  /** What a reader's failure means, in words. */
  private static String how(Exception f) {
    if (f instanceof FrameException) {
      return "broke the protocol (" + f.getMessage() + ")";
    }
    if (f instanceof SocketTimeoutException) {
      return "stopped mid-frame (" + f.getMessage() + ")";
    }
    if (f instanceof EOFException || f instanceof SocketException) {
      return "closed its connection (did its process exit?" + (f instanceof EOFException ? "" : " " + f.getMessage())
          + ")";
    }
    return "failed (" + f + ")";
  }

  private void sendOrFail(int r, byte type, byte[] payload, String name) {
    try {
      server.send(r, type, payload);
    } catch (IOException e) {
      throw failAll("rank 0 lost rank " + r + " (" + e.getMessage() + ") in " + name, e);
    }
  }

  /** Marks this rendezvous broken and returns the exception to throw. */
  private RendezvousException fail(String message, Throwable cause) {
    broken = message;
    close();
    return new RendezvousException(message, cause);
  }

  /** On rank 0: tells every other rank why, then marks it broken. */
  private RendezvousException failAll(String message, Throwable cause) {
    if (server != null && !closed) {
      server.tellAll(cut(message));
    }
    return fail(message, cause);
  }

  // ---- Helpers ------------------------------------------------------------------------------------

  private static byte[] cut(String message) {
    return Wire.cut(message);
  }

  private static String text(byte[] payload) {
    return new String(payload, StandardCharsets.UTF_8);
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // closing
    }
  }

  @Override
  public String toString() {
    return "Rendezvous[rank " + rank + " of " + size + " at " + where + (closed ? ", closed" : "") + "]";
  }
}
