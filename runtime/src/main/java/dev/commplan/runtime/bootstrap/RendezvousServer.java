package dev.commplan.runtime.bootstrap;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Rank 0's side of the rendezvous. The join: listen on the port, accept connections (one virtual thread
 * each runs {@link ServerHandshake}), admit each authenticated rank once (WELCOME), reject anything else
 * (an ERROR with the reason, when there is one, then close that connection only, and count it), and wait
 * until every rank has joined (READY to each) or the join timeout passes (an ERROR naming the missing
 * ranks to those that came, and a {@link RendezvousException}). Once joined: one {@link Link} per other
 * rank, a reader thread per link turning its frames (or its failure) into {@link Event}s, and the failure
 * fan-out that tells every rank why the rendezvous failed.
 *
 * <p>Trusts the ranks it admitted (their hellos were authenticated, when a secret is set) to be who they
 * say; trusts nothing they send beyond what {@link Link} and the collectives check.
 */
final class RendezvousServer {
  /** What a reader saw on rank {@code rank}'s link: a frame, or the failure that ended it. */
  record Event(int rank, Wire.Frame frame, Exception failure) {}

  private final int size;
  private final String where;
  private final Rendezvous.Options options;
  private final Authentication auth;
  private final Map<Integer, Link> joined = new TreeMap<>(); // guarded by this
  private final List<Socket> pending = new ArrayList<>(); // guarded by this: connections in their handshake
  private final AtomicLong rejected = new AtomicLong();
  private volatile boolean done;
  private Link[] links; // once joined: indexed by rank, [0] unused
  private long rejectedAtJoin;
  private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
  private final List<Thread> readers = new ArrayList<>();
  private volatile boolean closed;

  private RendezvousServer(int size, String where, Rendezvous.Options options) {
    this.size = size;
    this.where = where;
    this.options = options;
    this.auth = Authentication.of(options.secret());
  }

  /** Rank 0's join: accepts connections until every rank has joined or the join timeout passes. */
  static RendezvousServer serve(int size, String host, int port, String where, Rendezvous.Options options) {
    RendezvousServer s = new RendezvousServer(size, where, options);
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
          + " host and port (MASTER_ADDR/MASTER_PORT), and has the same " + Rendezvous.SECRET_ENV;
      for (Link l : links) {
        if (l != null) {
          try {
            l.send(Wire.ERROR, Wire.cut(message), 0);
          } catch (IOException ignored) {
            // it fails on its own deadline then
          }
          l.close();
        }
      }
      throw new RendezvousException(message);
    }
    s.links = links;
    s.rejectedAtJoin = s.rejected.get();
    for (int r = 1; r < size; r++) {
      try {
        links[r].send(Wire.READY, new byte[0], 0);
      } catch (IOException e) {
        s.closeLinks();
        throw new RendezvousException("rank 0 lost rank " + r + " (" + e.getMessage() + ") right after every rank"
            + " joined the rendezvous at " + where, e);
      }
    }
    s.startReaders();
    return s;
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

  private void accept(ServerSocket listener, long deadline) {
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

  /** One connection: admitted, or, on any breach of the protocol, closed and counted. */
  private void handshake(Socket socket, long joinDeadline) {
    long deadline = Math.min(joinDeadline, System.nanoTime() + options.handshakeTimeout().toNanos());
    try {
      Link link = ServerHandshake.run(socket, deadline, size, auth);
      int r = link.peer;
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
  }

  /** How many connections were rejected during the join. */
  long rejectedAtJoin() {
    return rejectedAtJoin;
  }

  private void startReaders() {
    for (int r = 1; r < size; r++) {
      Link link = links[r];
      readers.add(Thread.ofVirtual().name("commplan-rendezvous-read-" + r).start(() -> read(link)));
    }
  }

  /** One link's reader: between frames it waits without a deadline; a frame must then arrive whole. */
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

  /** The next event if there is one. */
  Event poll() {
    return events.poll();
  }

  /** The next event, waiting up to {@code nanos}; null if none came. */
  Event poll(long nanos) throws InterruptedException {
    return nanos > 0 ? events.poll(nanos, TimeUnit.NANOSECONDS) : null;
  }

  /** Sends a frame to rank {@code r}. */
  void send(int r, byte type, byte[] payload) throws IOException {
    links[r].send(type, payload, 0);
  }

  /** The failure fan-out: an ERROR with {@code reason} to every other rank, whichever can still be reached. */
  void tellAll(byte[] reason) {
    for (int r = 1; r < size; r++) {
      try {
        links[r].send(Wire.ERROR, reason, 0);
      } catch (IOException ignored) {
        // that one is gone already
      }
    }
  }

  /** Closes every link and stops the readers; idempotent. */
  void close() {
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

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // closing
    }
  }
}
