package dev.commplan.runtime.bootstrap;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Rank 0's side of the rendezvous. The join: {@link Admission} listens and admits the ranks; this waits
 * until every rank has joined (READY to each) or the join timeout passes (an ERROR naming the missing
 * ranks to those that came, and a {@link RendezvousException}). Once joined: one {@link Link} per other
 * rank, a reader thread per link turning its frames (or its failure) into {@link Event}s for the
 * collectives, and the failure fan-out that tells every rank why the rendezvous failed. Closing it closes
 * the links and the admission (the port).
 *
 * <p>Trusts the ranks admitted (their hellos were authenticated, when a secret is set) to be who they
 * say; trusts nothing they send beyond what {@link Link} and the collectives check.
 */
final class RendezvousServer {
  /** What a reader saw on rank {@code rank}'s link: a frame, or the failure that ended it. */
  record Event(int rank, Wire.Frame frame, Exception failure) {}

  private final int size;
  private final Rendezvous.Options options;
  private final Admission admission;
  private final Link[] links; // indexed by rank, [0] unused
  private final long rejectedAtJoin;
  private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
  private final List<Thread> readers = new ArrayList<>();
  private volatile boolean closed;

  private RendezvousServer(int size, Rendezvous.Options options, Admission admission, Link[] links) {
    this.size = size;
    this.options = options;
    this.admission = admission;
    this.links = links;
    this.rejectedAtJoin = admission.rejected();
  }

  /** Rank 0's join: accepts connections until every rank has joined or the join timeout passes. */
  static RendezvousServer serve(int size, String host, int port, String where, Rendezvous.Options options,
      System.Logger log) {
    Admission admission = Admission.open(size, host, port, where, options, log);
    Link[] links = admission.awaitJoin();
    List<Integer> missing = new ArrayList<>();
    for (int r = 1; r < size; r++) {
      if (links[r] == null) {
        missing.add(r);
      }
    }
    if (!missing.isEmpty()) {
      admission.close(); // the listener and the connections in their handshake
      String message = (missing.size() == 1 ? "rank " + missing.getFirst() + " never joined" : "ranks " + missing
          + " never joined") + " the rendezvous at " + where + " within the join timeout of " + options.joinTimeout()
          + " (joined: " + joinedText(links) + " of " + size + "; " + admission.rejected()
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
    RendezvousServer s = new RendezvousServer(size, options, admission, links);
    for (int r = 1; r < size; r++) {
      try {
        links[r].send(Wire.READY, new byte[0], 0);
      } catch (IOException e) {
        s.close();
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
      admission.left(link.peer);
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

  /** Closes every link, stops the readers, and stops listening; idempotent. */
  void close() {
    closed = true;
    admission.close();
    for (Link l : links) {
      if (l != null) {
        l.close();
      }
    }
    for (Thread t : readers) {
      t.interrupt();
    }
  }
}
