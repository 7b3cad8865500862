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

  private record Event(int rank, Wire.Frame frame, Exception failure) {}

  private final int rank;
  private final int size;
  private final String where; // host:port, for messages
  private final Options options;
  private final Link[] links; // rank 0: indexed by peer rank; others: [0] is rank 0
  private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
  private final List<Thread> readers = new ArrayList<>();
  private int ops;
  private volatile boolean closed;
  private String broken;

  private Rendezvous(int rank, int size, String where, Options options, Link[] links) {
    this.rank = rank;
    this.size = size;
    this.where = where;
    this.options = options;
    this.links = links;
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
      return new Rendezvous(0, 1, where, options, new Link[0]);
    }
    if (rank == 0) {
      return Server.serve(size, host, port, where, options);
    }
    Link toRankZero = RendezvousClient.connect(rank, size, host, port, where, options);
    return new Rendezvous(rank, size, where, options, new Link[] {toRankZero});
  }

  /** This process's rank. */
  public int rank() {
    return rank;
  }

  /** The number of ranks. */
  public int size() {
    return size;
  }

  // ---- Rank 0 ---------------------------------------------------------------------------------------

  /** Rank 0's join: accepts connections until every rank has joined or the join timeout passes. */
  private static final class Server {
    final int size;
    final String where;
    final Options options;
    final byte[] helloKey;
    final Map<Integer, Link> joined = new TreeMap<>();
    final AtomicLong rejected = new AtomicLong();
    final List<Socket> pending = new ArrayList<>();
    volatile boolean done;

    Server(int size, String where, Options options) {
      this.size = size;
      this.where = where;
      this.options = options;
      this.helloKey = Authentication.of(options.secret).helloKey();
    }

    static Rendezvous serve(int size, String host, int port, String where, Options options) {
      Server s = new Server(size, where, options);
      long deadline = System.nanoTime() + options.joinTimeout().toNanos();
      ServerSocket listener;
      try {
        listener = new ServerSocket();
        listener.setReuseAddress(true);
        InetAddress bind = InetAddress.getByName(host).isLoopbackAddress() ? InetAddress.getByName(host) : null;
        listener.bind(new InetSocketAddress(bind, port), 512);
      } catch (IOException e) {
        throw new RendezvousException("rank 0 could not listen on port " + port + " (" + where + "): " + e.getMessage()
            + "; is another job (or torchrun's own store) using it? set " + LaunchEnvironment.PORT_ENV
            + " (or MASTER_PORT) to a free port on every rank", e);
      }
      Thread acceptor = Thread.ofVirtual().name("commplan-rendezvous-accept").start(() -> s.accept(listener, deadline));
      try {
        synchronized (s) {
          while (s.joined.size() < size - 1) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
              break;
            }
            s.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
          }
          s.done = true;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        s.done = true;
      } finally {
        closeQuietly(listener);
        acceptor.interrupt();
      }
      synchronized (s) {
        for (Socket p : s.pending) {
          closeQuietly(p);
        }
      }
      Link[] links = new Link[size];
      List<Integer> missing = new ArrayList<>();
      synchronized (s) {
        for (int r = 1; r < size; r++) {
          links[r] = s.joined.get(r);
          if (links[r] == null) {
            missing.add(r);
          }
        }
      }
      if (!missing.isEmpty()) {
        String message = (missing.size() == 1 ? "rank " + missing.getFirst() + " never joined" : "ranks " + missing
            + " never joined") + " the rendezvous at " + where + " within the join timeout of " + options.joinTimeout()
            + " (joined: " + joinedText(links) + " of " + size + "; " + s.rejected.get()
            + " connections rejected); check that every rank was started (under Slurm, with srun), reaches this"
            + " host and port (MASTER_ADDR/MASTER_PORT), and has the same " + SECRET_ENV;
        for (Link l : links) {
          if (l != null) {
            try {
              l.send(Wire.ERROR, cut(message), 0);
            } catch (IOException ignored) {
              // it fails on its own deadline then
            }
            l.close();
          }
        }
        throw new RendezvousException(message);
      }
      Rendezvous rv = new Rendezvous(0, size, where, options, links);
      rv.rejectedAtJoin = s.rejected.get();
      for (int r = 1; r < size; r++) {
        try {
          links[r].send(Wire.READY, new byte[0], 0);
        } catch (IOException e) {
          rv.closeLinks();
          throw new RendezvousException("rank 0 lost rank " + r + " (" + e.getMessage() + ") right after every rank"
              + " joined the rendezvous at " + where, e);
        }
      }
      rv.startReaders();
      return rv;
    }

    private static String joinedText(Link[] links) {
      List<Integer> j = new ArrayList<>(List.of(0));
      for (int r = 1; r < links.length; r++) {
        if (links[r] != null) {
          j.add(r);
        }
      }
      return "ranks " + j;
    }

    void accept(ServerSocket listener, long deadline) {
      while (!done) {
        Socket socket;
        try {
          socket = listener.accept();
        } catch (IOException e) {
          return; // closed: the join is over
        }
        synchronized (this) {
          if (done) {
            closeQuietly(socket);
            return;
          }
          pending.add(socket);
        }
        Thread.ofVirtual().name("commplan-rendezvous-hello").start(() -> handshake(socket, deadline));
      }
    }

    /** One connection's hello; on any breach of the protocol, that connection is closed and counted. */
    void handshake(Socket socket, long joinDeadline) {
      long deadline = Math.min(joinDeadline, System.nanoTime() + options.handshakeTimeout().toNanos());
      Link link = null;
      try {
        socket.setTcpNoDelay(true);
        InputStream in = new BufferedInputStream(socket.getInputStream());
        OutputStream out = new BufferedOutputStream(socket.getOutputStream());
        byte[] serverNonce = Authentication.nonce();
        byte[] challenge = ByteBuffer.allocate(Wire.NONCE_BYTES + 4).put(serverNonce).putInt(size).array();
        Wire.write(out, Wire.encode(Wire.CHALLENGE, helloKey != null ? Wire.AUTH : 0, 0, 0, challenge, null));
        Wire.Frame hello = Wire.read(socket, in, deadline, Wire.HANDSHAKE_CAP, helloKey);
        if (hello.type() != Wire.HELLO) {
          throw new FrameException("expected HELLO, got " + Wire.typeName(hello.type()));
        }
        if (hello.seq() != 0) {
          throw new FrameException("HELLO has sequence number " + hello.seq() + ", expected 0");
        }
        if (hello.payload().length != 2 * Wire.NONCE_BYTES + 4) {
          throw new FrameException("HELLO payload of " + hello.payload().length + " bytes, expected "
              + (2 * Wire.NONCE_BYTES + 4));
        }
        ByteBuffer p = ByteBuffer.wrap(hello.payload());
        byte[] clientNonce = new byte[Wire.NONCE_BYTES];
        byte[] echo = new byte[Wire.NONCE_BYTES];
        p.get(clientNonce).get(echo);
        int theirSize = p.getInt();
        Authentication.requireEcho(echo, serverNonce);
        int r = hello.rank();
        if (theirSize != size) {
          throw new FrameException("rank " + r + " has a job size of " + theirSize + " but rank 0's is " + size
              + ": every rank must have the same WORLD_SIZE");
        }
        if (r < 1 || r >= size) {
          throw new FrameException("rank " + r + " is not a rank that joins a " + size + "-rank rendezvous (1.."
              + (size - 1) + ")");
        }
        Authentication.SessionKeys keys = Authentication.of(options.secret).sessionKeys(serverNonce, clientNonce, r);
        link = new Link(r, socket, in, out, keys.serverToClient(), keys.clientToServer());
        synchronized (this) {
          if (done) {
            throw new FrameException("the join is over");
          }
          if (joined.containsKey(r)) {
            throw new FrameException("rank " + r + " has already joined; two processes claim rank " + r
                + " (check RANK on every process)");
          }
          link.sendSeq = -1; // WELCOME goes out with sequence number 0, like the HELLO it answers
          link.send(Wire.WELCOME, new byte[0], 0);
          pending.remove(socket);
          joined.put(r, link);
          notifyAll();
        }
      } catch (IOException | RuntimeException e) {
        rejected.incrementAndGet();
        if (e instanceof FrameException) {
          try {
            Wire.write(socket.getOutputStream(), Wire.encode(Wire.ERROR, (byte) 0, 0, 0,
                cut("rank 0 rejected this connection: " + e.getMessage()), null));
          } catch (IOException ignored) {
            // it is closed below anyway
          }
        }
        synchronized (this) {
          pending.remove(socket);
        }
        closeQuietly(socket);
      }
    }
  }

  /** Connections rank 0 rejected while joining (for tests and logs). */
  private long rejectedAtJoin;

  /** How many connections rank 0 rejected during the join; 0 on other ranks. */
  public long rejectedConnections() {
    return rejectedAtJoin;
  }

  private void startReaders() {
    for (int r = 1; r < size; r++) {
      Link link = links[r];
      readers.add(Thread.ofVirtual().name("commplan-rendezvous-read-" + r).start(() -> read(link)));
    }
  }

  /** Rank 0's reader of one connection: between frames it waits without a deadline; a frame must then arrive whole. */
  private void read(Link link) {
    try {
      while (!closed) {
        try {
          link.socket.setSoTimeout(1000);
          link.in.mark(1);
          if (link.in.read() < 0) {
            throw new EOFException("connection closed");
          }
          link.in.reset();
        } catch (SocketTimeoutException idle) {
          continue;
        }
        Wire.Frame f = link.receive(System.nanoTime() + options.opTimeout().toNanos(), options.maxPayload() + 64);
        events.add(new Event(link.peer, f, null));
      }
    } catch (IOException | RuntimeException e) {
      if (!closed) {
        events.add(new Event(link.peer, null, e));
      }
    }
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
      Event early = events.poll(); // a rank that failed or broke the protocol since the last operation
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
        links[0].send(Wire.DATA, opPayload(op, OP_ALL_GATHER, data), rank);
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
      Event e = nextEvent(deadline, name, parts);
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
      for (int r = 0; r < links.length; r++) {
        if (links[r] != null) {
          try {
            links[r].send(Wire.ERROR, message, rank);
          } catch (IOException ignored) {
            // it is going away anyway
          }
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
    closeLinks();
    for (Thread t : readers) {
      t.interrupt();
    }
  }

  private void closeLinks() {
    for (Link l : links) {
      if (l != null) {
        l.close();
      }
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
      f = links[0].receive(deadline, options.maxPayload() + 64);
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

  private Event nextEvent(long deadline, String name, byte[][] parts) {
    try {
      long left = deadline - System.nanoTime();
      Event e = left > 0 ? events.poll(left, TimeUnit.NANOSECONDS) : null;
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
  private Wire.Frame failedFrame(Event e) {
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
      links[r].send(type, payload, 0);
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
    if (rank == 0 && !closed) {
      byte[] reason = cut(message);
      for (int r = 1; r < size; r++) {
        try {
          links[r].send(Wire.ERROR, reason, 0);
        } catch (IOException ignored) {
          // that one is gone already
        }
      }
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
