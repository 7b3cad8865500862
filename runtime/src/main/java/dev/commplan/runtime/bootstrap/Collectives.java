package dev.commplan.runtime.bootstrap;

import dev.commplan.runtime.agreement.MeetingChecks;
import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The operations of a joined rendezvous: {@link #broadcast} from rank 0, {@link #allGather}, {@link
 * #barrier}, {@link #abort}; collective (every rank calls them in the same order). Rank 0 is the hub:
 * the others send it their DATA and receive its RESULT. Each operation is numbered and names its kind, so
 * ranks calling different operations are told so. Each has a deadline ({@link Rendezvous.Options#opTimeout}
 * on rank 0; the others wait up to twice it, at most 10 s more, so that rank 0's report naming the
 * culprit arrives first). On rank 0, a peer that closes its connection, breaks the protocol or sends
 * nothing in time fails the operation naming it, and the reason goes to every other rank (the server's
 * fan-out); after any failure the rendezvous is unusable.
 *
 * <p>Trusts the links it is given (joined, authenticated when a secret is set), and nothing in the
 * payloads: lengths and counts are checked against what is there and the cap. Used by one thread.
 */
final class Collectives {
  private static final byte OP_BROADCAST = 1;
  private static final byte OP_ALL_GATHER = 2;

  private final int rank;
  private final int size;
  private final String where; // host:port, for messages
  private final Rendezvous.Options options;
  private final RendezvousServer server; // rank 0 of several ranks
  private final Link root; // the other ranks: the link to rank 0
  private int ops;
  private volatile boolean closed;
  private String broken;

  private Collectives(int rank, int size, String where, Rendezvous.Options options, RendezvousServer server,
      Link root) {
    this.rank = rank;
    this.size = size;
    this.where = where;
    this.options = options;
    this.server = server;
    this.root = root;
  }

  /** A job of one rank: no connections. */
  static Collectives alone(String where, Rendezvous.Options options) {
    return new Collectives(0, 1, where, options, null, null);
  }

  /** Rank 0 of several, over its joined server. */
  static Collectives rankZero(int size, String where, Rendezvous.Options options, RendezvousServer server) {
    return new Collectives(0, size, where, options, Objects.requireNonNull(server), null);
  }

  /** Another rank, over its link to rank 0. */
  static Collectives member(int rank, int size, String where, Rendezvous.Options options, Link toRankZero) {
    return new Collectives(rank, size, where, options, null, Objects.requireNonNull(toRankZero));
  }

  boolean isClosed() {
    return closed;
  }

  /** How many connections rank 0 rejected during the join; 0 on other ranks. */
  long rejectedConnections() {
    return server == null ? 0 : server.rejectedAtJoin();
  }

  /** {@link Rendezvous#broadcast}: rank 0 sends its data to every rank as a RESULT. */
  byte[] broadcast(byte[] data) {
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
   * {@link Rendezvous#allGather}: every rank sends DATA to rank 0, which packs the contributions (count,
   * then each length and bytes) into one RESULT for every rank.
   */
  List<byte[]> allGather(byte[] data) {
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

  /** {@link Rendezvous#barrier}: an all-gather of nothing. */
  void barrier() {
    allGather(new byte[0]);
  }

  /** {@link Rendezvous#abort}: an ERROR to every rank this one talks to, then close. */
  void abort(String reason) {
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
  void close() {
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

  /** {@return what messages call the operation of kind {@code kind}} */
  private static String kindName(byte kind) {
    return kind == OP_BROADCAST ? "broadcast" : kind == OP_ALL_GATHER ? "allGather" : "operation kind " + kind;
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
    String differing = MeetingChecks.differingRendezvousOperations(rank, kindName(kind), op, from, kindName(theirKind),
        theirOp);
    if (differing != null) { // the agreement check decides and words where ranks' calls differ
      throw failAll(differing, null);
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

  private static byte[] cut(String message) {
    return Wire.cut(message);
  }

  private static String text(byte[] payload) {
    return new String(payload, StandardCharsets.UTF_8);
  }
}
