package dev.commplan.runtime.bootstrap;

import dev.commplan.runtime.launch.LaunchEnvironment;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Who gets in, on rank 0: listens on the port, accepts connections (a virtual thread each runs {@link
 * ServerHandshake}), admits each authenticated rank once (WELCOME), and rejects anything else: an ERROR
 * with the reason when there is one, then that connection closed (the others are not disturbed), counted,
 * and logged by {@link RejectionLog}.
 *
 * <p>Once every rank has joined, it keeps listening until the rendezvous closes, so that a late process
 * hears why it cannot join rather than "connection refused": the same handshake, then an ERROR saying
 * that the rendezvous of this job has closed (all N ranks joined at a time), with the documented "two
 * processes claim rank N" when it claims a rank whose process is still connected. A late hello for a
 * rank whose process has left (its connection closed) is closed without an answer: that is most likely
 * the rank starting the next rendezvous on this port before rank 0 has closed this one, and it retries
 * as if nobody listened. Late handshakes are bounded ({@value #LATE_HANDSHAKES} at once, each within the
 * handshake timeout); beyond that, a late connection gets the ERROR at once, nothing read. A join that
 * fails closes the listener at once.
 *
 * <p>Trusts nothing a connection sends: what reaches {@link #admit} has passed {@link ServerHandshake}
 * (its rank authenticated when a secret is set). Reasons sent and logged are rank 0's own words.
 */
final class Admission {
  /** Late connections (after the join) in their handshake at once, at most; beyond, answered without one. */
  static final int LATE_HANDSHAKES = 8;

  private final int size;
  private final Rendezvous.Options options;
  private final Authentication auth;
  private final RejectionLog rejections;
  private final ServerSocket listener;
  private final long joinDeadline;
  private final Map<Integer, Link> joined = new TreeMap<>(); // guarded by this
  private final List<Socket> pending = new ArrayList<>(); // guarded by this: connections in their handshake
  private final AtomicLong rejected = new AtomicLong();
  private final Set<Integer> left = new HashSet<>(); // guarded by this: joined ranks whose connection ended
  private Thread acceptor;
  private volatile boolean done; // the join is over
  private volatile Instant joinedAt; // when every rank had joined; null while joining, or if the join failed
  private int lateInFlight; // guarded by this
  private volatile boolean closed;

  private Admission(int size, String where, Rendezvous.Options options, System.Logger log, ServerSocket listener,
      long joinDeadline) {
    this.size = size;
    this.options = options;
    this.auth = Authentication.of(options.secret());
    this.rejections = new RejectionLog(log, where);
    this.listener = listener;
    this.joinDeadline = joinDeadline;
  }

  /** Listens on {@code port} (loopback only when {@code host} is a loopback address) and starts accepting. */
  static Admission open(int size, String host, int port, String where, Rendezvous.Options options, System.Logger log) {
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
    Admission a = new Admission(size, where, options, log, listener, deadline);
    a.acceptor = Thread.ofVirtual().name("commplan-rendezvous-accept").start(a::accept);
    return a;
  }

  /**
   * Waits until every rank has joined or the join timeout passes, and ends the join: the joined ranks'
   * links, indexed by rank (null for those that never came, and for 0).
   */
  Link[] awaitJoin() {
    try {
      synchronized (this) {
        while (joined.size() < size - 1) {
          long left = joinDeadline - System.nanoTime();
          if (left <= 0) {
            break;
          }
          wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
        endJoin();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      synchronized (this) {
        endJoin();
      }
    }
    Link[] links = new Link[size];
    synchronized (this) {
      for (int r = 1; r < size; r++) {
        links[r] = joined.get(r);
      }
    }
    return links;
  }

  /** How many connections were rejected so far. */
  long rejected() {
    return rejected.get();
  }

  /** A joined rank's connection has ended: a late hello claiming it is not a second process. */
  synchronized void left(int rank) {
    left.add(rank);
    notifyAll(); // a late hello for this rank may be waiting in admit to learn it
  }

  /** Stops listening (the port is free when it returns) and closes the connections in their handshake; idempotent. */
  void close() {
    closed = true;
    try {
      listener.close();
    } catch (IOException ignored) {
      // closing
    }
    try {
      // a socket closed while a virtual thread is blocked in accept is released when that thread leaves it:
      // wait, so that the port is free when this returns (the next rendezvous may bind it at once)
      acceptor.join(Duration.ofSeconds(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    synchronized (this) {
      for (Socket p : pending) {
        closeQuietly(p);
      }
      notifyAll(); // a late hello waiting in admit for a rank to leave stops waiting
    }
    rejections.summary();
  }

  /** Under the lock: the join is over, complete if every rank has joined. */
  private void endJoin() {
    done = true;
    if (joined.size() == size - 1) {
      joinedAt = Instant.now();
    }
  }

  /** Accepts until the listener closes: the join's connections, then late ones (bounded). */
  private void accept() {
    while (true) {
      Socket socket;
      try {
        socket = listener.accept();
      } catch (IOException e) {
        return; // closed: the join failed, or the rendezvous closed
      }
      boolean late;
      boolean overflow = false;
      synchronized (this) {
        if (closed || (done && joinedAt == null)) { // closing, or the join failed: nobody is let in
          closeQuietly(socket);
          return;
        }
        late = done;
        if (late && lateInFlight >= LATE_HANDSHAKES) {
          overflow = true;
        } else {
          lateInFlight += late ? 1 : 0;
          pending.add(socket);
        }
      }
      if (overflow) {
        answerWithoutHandshake(socket);
      } else {
        Thread.ofVirtual().name("commplan-rendezvous-hello").start(() -> handshake(socket, late));
      }
    }
  }

  /** One connection: admitted, or, on any breach of the protocol, closed, counted and logged. */
  private void handshake(Socket socket, boolean late) {
    long deadline = System.nanoTime() + options.handshakeTimeout().toNanos();
    Exception failure = null;
    try {
      Link link = ServerHandshake.run(socket, late ? deadline : Math.min(joinDeadline, deadline), size, auth);
      admit(link, socket, deadline);
    } catch (IOException | RuntimeException e) {
      failure = e;
    } finally {
      if (late) {
        synchronized (this) {
          lateInFlight--; // the verdict is known: its slot is free before the peer hears it
        }
      }
    }
    if (failure != null) {
      reject(socket, failure);
    }
  }

  /**
   * Admits an authenticated rank (WELCOME), or says why not. A late hello for a joined rank whose connection
   * still looks open waits, for up to half of what is left of its handshake, for that connection's reader to
   * see it end: a rank that closes this rendezvous and joins the next one on the port sends its FIN before
   * this hello, so the old connection has ended and only its reader may not have run yet. A second process
   * claiming the rank still hears so within its handshake.
   */
  private synchronized void admit(Link link, Socket socket, long handshakeDeadline) throws IOException {
    int r = link.peer;
    if (done && joinedAt == null) {
      throw new FrameException("the join is over");
    }
    if (done && joined.containsKey(r)) {
      awaitLeft(r, System.nanoTime() + (handshakeDeadline - System.nanoTime()) / 2);
    }
    if (joined.containsKey(r)) {
      if (done && left.contains(r)) {
        throw new RankLeft("rank " + r + " has left this rendezvous (its connection closed), so this is not a second"
            + " process claiming it: closed without an answer, so that it retries (the next rendezvous on this port?)");
      }
      throw new FrameException("rank " + r + " has already joined; two processes claim rank " + r
          + " (check RANK on every process)");
    }
    if (done) {
      throw new FrameException("the join is over");
    }
    link.sendSeq = -1; // WELCOME goes out with sequence number 0, like the HELLO it answers
    link.send(Wire.WELCOME, new byte[0], 0);
    pending.remove(socket);
    joined.put(r, link);
    notifyAll();
  }

  /** Waits (releasing this monitor while it waits) until rank {@code r} has left or {@code until} passes. */
  private void awaitLeft(int r, long until) throws IOException {
    try {
      for (long wait = until - System.nanoTime(); !left.contains(r) && !closed && wait > 0;
          wait = until - System.nanoTime()) {
        wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while rank " + r + "'s earlier connection was checked");
    }
  }

  /** A late hello for a rank whose process has left: not answered, so that it retries. */
  private static final class RankLeft extends IOException {
    private static final long serialVersionUID = 1L;

    RankLeft(String message) {
      super(message);
    }
  }

  private void reject(Socket socket, Exception e) {
    rejected.incrementAndGet();
    String reason = reason(socket, e) + (joinedAt != null && !(e instanceof RankLeft) ? "; " + closedNote() : "");
    rejections.rejected(socket, reason);
    if (e instanceof FrameException) {
      try {
        Wire.write(socket.getOutputStream(), Wire.encode(Wire.ERROR, (byte) 0, 0, 0,
            Wire.cut("rank 0 rejected this connection: " + reason), null));
      } catch (IOException ignored) {
        // it is closed below anyway
      }
    }
    synchronized (this) {
      pending.remove(socket);
    }
    closeQuietly(socket);
  }

  /** A late connection beyond {@link #LATE_HANDSHAKES}: the ERROR at once, nothing read. */
  private void answerWithoutHandshake(Socket socket) {
    rejected.incrementAndGet();
    String reason = closedNote() + "; answered without a handshake (" + LATE_HANDSHAKES
        + " late connections are in theirs)";
    rejections.rejected(socket, reason);
    try {
      Wire.write(socket.getOutputStream(), Wire.encode(Wire.ERROR, (byte) 0, 0, 0, Wire.cut(reason), null));
    } catch (IOException ignored) {
      // it is closed below anyway
    }
    closeQuietly(socket);
  }

  /** What went wrong with a connection in its handshake, in rank 0's words (never the peer's). */
  private String reason(Socket socket, Exception e) {
    if (e instanceof FrameException || e instanceof RankLeft) {
      return e.getMessage();
    }
    if (socket.isClosed()) {
      return "rank 0 closed it during its handshake (" + (joinedAt == null ? "the join failed" : "the rendezvous closed")
          + ")";
    }
    if (e instanceof SocketTimeoutException) {
      return "sent no complete HELLO in time (" + e.getMessage() + ")";
    }
    if (e instanceof EOFException) {
      return "closed the connection without a complete HELLO (a joining rank does so when it refuses rank 0's"
          + " challenge: another job size, or a secret on one side only)";
    }
    return e instanceof IOException ? "connection failed (" + e.getMessage() + ")" : "failed (" + e + ")";
  }

  private String closedNote() {
    return "the rendezvous of this job has closed (all " + size + " ranks joined at "
        + joinedAt.truncatedTo(ChronoUnit.MILLIS) + ")";
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing
    }
  }
}
