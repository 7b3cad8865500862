package dev.commplan.runtime.bootstrap;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Who gets in, on rank 0: listens on the port, accepts connections (a virtual thread each runs {@link
 * ServerHandshake}), admits each authenticated rank once (WELCOME), and rejects anything else: an ERROR
 * with the reason when there is one, then that connection closed (the others are not disturbed) and
 * counted. When the join ends it stops listening.
 *
 * <p>Trusts nothing a connection sends: what reaches {@link #admit} has passed {@link ServerHandshake}
 * (its rank authenticated when a secret is set). Reasons sent are rank 0's own words.
 */
final class Admission {
  private final int size;
  private final Rendezvous.Options options;
  private final Authentication auth;
  private final ServerSocket listener;
  private final long joinDeadline;
  private final Map<Integer, Link> joined = new TreeMap<>(); // guarded by this
  private final List<Socket> pending = new ArrayList<>(); // guarded by this: connections in their handshake
  private final AtomicLong rejected = new AtomicLong();
  private Thread acceptor;
  private volatile boolean done; // the join is over

  private Admission(int size, Rendezvous.Options options, ServerSocket listener, long joinDeadline) {
    this.size = size;
    this.options = options;
    this.auth = Authentication.of(options.secret());
    this.listener = listener;
    this.joinDeadline = joinDeadline;
  }

  /** Listens on {@code port} (loopback only when {@code host} is a loopback address) and starts accepting. */
  static Admission open(int size, String host, int port, String where, Rendezvous.Options options) {
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
    Admission a = new Admission(size, options, listener, deadline);
    a.acceptor = Thread.ofVirtual().name("commplan-rendezvous-accept").start(a::accept);
    return a;
  }

  /**
   * Waits until every rank has joined or the join timeout passes, ends the join and stops listening: the
   * joined ranks' links, indexed by rank (null for those that never came, and for 0).
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
        done = true;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      done = true;
    } finally {
      closeQuietly(listener);
      acceptor.interrupt();
    }
    synchronized (this) {
      for (Socket p : pending) {
        closeQuietly(p);
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

  private void accept() {
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
      Thread.ofVirtual().name("commplan-rendezvous-hello").start(() -> handshake(socket));
    }
  }

  /** One connection: admitted, or, on any breach of the protocol, closed and counted. */
  private void handshake(Socket socket) {
    long deadline = Math.min(joinDeadline, System.nanoTime() + options.handshakeTimeout().toNanos());
    try {
      Link link = ServerHandshake.run(socket, deadline, size, auth);
      admit(link, socket);
    } catch (IOException | RuntimeException e) {
      reject(socket, e);
    }
  }

  /** Admits an authenticated rank (WELCOME), or says why not. */
  private synchronized void admit(Link link, Socket socket) throws IOException {
    int r = link.peer;
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

  private void reject(Socket socket, Exception e) {
    rejected.incrementAndGet();
    if (e instanceof FrameException) {
      try {
        Wire.write(socket.getOutputStream(), Wire.encode(Wire.ERROR, (byte) 0, 0, 0,
            Wire.cut("rank 0 rejected this connection: " + e.getMessage()), null));
      } catch (IOException ignored) {
        // it is closed below anyway
      }
    }
    synchronized (this) {
      pending.remove(socket);
    }
    closeQuietly(socket);
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // closing
    }
  }
}
