package dev.commplan.runtime.bootstrap;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The joining side (every rank but 0): connects to rank 0, retrying with backoff (20 ms doubling to 1 s)
 * until the join timeout while nobody listens or a connection drops before the handshake ends; then the
 * handshake (read the CHALLENGE, send the tagged HELLO echoing it, read WELCOME) and the wait for READY,
 * which rank 0 sends once every rank has joined (or an ERROR naming the ranks that never came). Returns
 * the {@link Link} to rank 0; every later frame goes over it.
 *
 * <p>Trusts the secret and rank 0's address as configured. An ERROR from rank 0 before any key is shared
 * cannot be authenticated, so someone on the path can make a join fail (as by resetting the connection);
 * everything after WELCOME must be tagged with the key only rank 0 can derive.
 */
final class RendezvousClient {
  private RendezvousClient() {}

  /** Joins as {@code rank}: the link to rank 0 once every rank has joined. */
  static Link connect(int rank, int size, String host, int port, String where, Rendezvous.Options options) {
    long deadline = System.nanoTime() + options.joinTimeout().toNanos();
    Authentication auth = Authentication.of(options.secret());
    long backoffMs = 20;
    String last = "no attempt";
    while (true) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new RendezvousException("rank " + rank + " could not join the rendezvous at " + where
            + " within the join timeout of " + options.joinTimeout() + " (last attempt: " + last
            + "); check that rank 0 is running and reachable there (MASTER_ADDR/MASTER_PORT); rank 0 stops listening"
            + " once its rendezvous closes, so if the other ranks have started, check that no two processes claim"
            + " rank " + rank + " (RANK on every process)");
      }
      Socket socket = new Socket();
      try {
        socket.setTcpNoDelay(true);
        socket.connect(new InetSocketAddress(host, port), (int) Math.max(1, Math.min(5000, left / 1_000_000)));
      } catch (IOException e) { // not listening yet: retry
        closeQuietly(socket);
        last = e.getMessage();
        sleep(Math.min(backoffMs, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
        backoffMs = Math.min(1000, backoffMs * 2);
        continue;
      }
      try {
        return hello(rank, size, where, options, socket, auth, deadline);
      } catch (RendezvousException e) {
        closeQuietly(socket);
        throw e;
      } catch (IOException e) { // dropped before the handshake ended (e.g. rank 0 restarting): retry
        closeQuietly(socket);
        last = e.getMessage();
        sleep(backoffMs);
        backoffMs = Math.min(1000, backoffMs * 2);
      }
    }
  }

  private static Link hello(int rank, int size, String where, Rendezvous.Options options, Socket socket,
      Authentication auth, long joinDeadline) throws IOException {
    InputStream in = new BufferedInputStream(socket.getInputStream());
    OutputStream out = new BufferedOutputStream(socket.getOutputStream());
    long handshakeDeadline = Math.min(joinDeadline, System.nanoTime() + options.handshakeTimeout().toNanos());
    Wire.Frame challenge = Wire.read(socket, in, handshakeDeadline, Wire.HANDSHAKE_CAP, null);
    byte[] serverNonce = serverNonce(rank, size, where, auth, challenge);
    byte[] clientNonce = Authentication.nonce();
    byte[] payload = ByteBuffer.allocate(2 * Wire.NONCE_BYTES + 4).put(clientNonce).put(serverNonce).putInt(size).array();
    Wire.write(out, Wire.encode(Wire.HELLO, (byte) 0, rank, 0, payload, auth.helloKey()));
    Authentication.SessionKeys keys = auth.sessionKeys(serverNonce, clientNonce, rank);
    byte[] s2c = keys.serverToClient();
    Link link = new Link(0, socket, in, out, keys.clientToServer(), s2c);
    link.recvSeq = -1; // WELCOME has sequence number 0
    Wire.Frame welcome;
    try {
      welcome = Wire.read(socket, in, handshakeDeadline, Wire.HANDSHAKE_CAP, s2c, true);
    } catch (FrameException e) {
      throw new RendezvousException("rank " + rank + ": rank 0's answer (" + where + ") was refused: " + e.getMessage(), e);
    }
    if (welcome.type() == Wire.ERROR) {
      throw new RendezvousException("rank " + rank + ": rank 0 (" + where + ") rejected it: " + text(welcome.payload()));
    }
    if (welcome.type() != Wire.WELCOME || welcome.rank() != 0 || welcome.seq() != 0) {
      throw new RendezvousException("rank " + rank + ": rank 0 (" + where + ") answered its hello with "
          + Wire.typeName(welcome.type()) + " (rank " + welcome.rank() + ", sequence " + welcome.seq() + ")");
    }
    link.recvSeq = 0;
    awaitReady(rank, where, options, link, joinDeadline);
    return link;
  }

  /**
   * Rank 0's first frame, {@code challenge}: a CommPlan rendezvous's challenge, with authentication on or off
   * as here and the same job size. Returns rank 0's nonce, which the hello signs.
   */
  private static byte[] serverNonce(int rank, int size, String where, Authentication auth, Wire.Frame challenge) {
    if (challenge.type() == Wire.ERROR) {
      throw new RendezvousException("rank " + rank + ": the rendezvous at " + where + " refused it: "
          + text(challenge.payload()));
    }
    if (challenge.type() != Wire.CHALLENGE || challenge.payload().length != Wire.NONCE_BYTES + 4) {
      throw new RendezvousException("rank " + rank + ": " + where + " did not answer like a CommPlan rendezvous (got "
          + Wire.typeName(challenge.type()) + " of " + challenge.payload().length + " bytes)");
    }
    boolean serverAuth = (challenge.flags() & Wire.AUTH) != 0;
    if (serverAuth != auth.enabled()) {
      throw new RendezvousException("rank " + rank + ": " + (serverAuth
          ? "rank 0 requires authenticated frames (" + Rendezvous.SECRET_ENV + " is set there) but it is not set here"
          : Rendezvous.SECRET_ENV + " is set here but not on rank 0") + ": set the same secret on every rank, or on none");
    }
    ByteBuffer c = ByteBuffer.wrap(challenge.payload());
    byte[] serverNonce = new byte[Wire.NONCE_BYTES];
    c.get(serverNonce);
    int theirSize = c.getInt();
    if (theirSize != size) {
      throw new RendezvousException("rank " + rank + " has a job size of " + size + " but the rendezvous at " + where
          + " is for " + theirSize + " ranks: every rank must have the same WORLD_SIZE (or is another job on this port?)");
    }
    return serverNonce;
  }

  /**
   * Joined: waits on {@code link} for rank 0 to say that every other rank has joined too (READY), or name who
   * never came (ERROR), until the join deadline plus the handshake timeout.
   */
  private static void awaitReady(int rank, String where, Rendezvous.Options options, Link link, long joinDeadline)
      throws IOException {
    Wire.Frame ready;
    long readyDeadline = joinDeadline + options.handshakeTimeout().toNanos();
    try {
      ready = link.receive(readyDeadline, Wire.HANDSHAKE_CAP);
    } catch (SocketTimeoutException e) {
      throw new RendezvousException("rank " + rank + " joined the rendezvous at " + where + " but rank 0 did not say"
          + " every rank had joined within the join timeout of " + options.joinTimeout(), e);
    } catch (EOFException | SocketException e) {
      throw new RendezvousException("rank " + rank + ": rank 0 (" + where + ") closed the connection while waiting for"
          + " the other ranks to join (did its process exit?)", e);
    } catch (FrameException e) {
      throw new RendezvousException("rank " + rank + ": rank 0 (" + where + ") sent a bad frame while joining: "
          + e.getMessage(), e);
    }
    if (ready.type() == Wire.ERROR) {
      throw new RendezvousException("rank " + rank + ": rank 0 (" + where + ") reports: " + text(ready.payload()));
    }
    if (ready.type() != Wire.READY) {
      throw new RendezvousException("rank " + rank + ": rank 0 (" + where + ") sent " + Wire.typeName(ready.type())
          + " instead of READY");
    }
  }


  private static String text(byte[] payload) {
    return new String(payload, StandardCharsets.UTF_8);
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(Math.max(1, ms));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RendezvousException("interrupted while joining the rendezvous", e);
    }
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing
    }
  }
}
