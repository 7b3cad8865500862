package dev.commplan.runtime.bootstrap;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;

/**
 * Rank 0's side of one connection's handshake: the only code on rank 0 that reads from a process that
 * has not joined. Sends the CHALLENGE (a fresh nonce and the job size, flagged when a secret is set),
 * reads the HELLO by the deadline and under the handshake cap, and checks it: the type, sequence number
 * 0, the payload's shape, the tag (hello key), that it echoes this connection's challenge, the job size,
 * and that the rank is one that joins ({@code 1..size-1}). Returns the rank's {@link Link}, keyed for
 * this connection; whether the rank may join (is it free, is the join open) is the server's decision.
 *
 * <p>Trusts nothing the peer sends: any breach is a {@link FrameException} with the reason (never the
 * secret, a key or a tag), and the caller closes the connection.
 */
final class ServerHandshake {
  private ServerHandshake() {}

  /** The HELLO's payload: the client's nonce, the echoed server nonce, the job size. */
  static final int HELLO_BYTES = 2 * Wire.NONCE_BYTES + 4;

  /**
   * Runs the handshake on {@code socket} for a job of {@code size} ranks.
   *
   * @return the link of the rank the hello authenticated, its WELCOME not yet sent
   * @throws FrameException for a hello that breaks the protocol, with the reason
   * @throws IOException when the connection closes or the deadline passes first
   */
  static Link run(Socket socket, long deadline, int size, Authentication auth) throws IOException {
    socket.setTcpNoDelay(true);
    InputStream in = new BufferedInputStream(socket.getInputStream());
    OutputStream out = new BufferedOutputStream(socket.getOutputStream());
    byte[] serverNonce = Authentication.nonce();
    byte[] challenge = ByteBuffer.allocate(Wire.NONCE_BYTES + 4).put(serverNonce).putInt(size).array();
    Wire.write(out, Wire.encode(Wire.CHALLENGE, auth.enabled() ? Wire.AUTH : 0, 0, 0, challenge, null));
    Wire.Frame hello = Wire.read(socket, in, deadline, Wire.HANDSHAKE_CAP, auth.helloKey());
    if (hello.type() != Wire.HELLO) {
      throw new FrameException("expected HELLO, got " + Wire.typeName(hello.type()));
    }
    if (hello.seq() != 0) {
      throw new FrameException("HELLO has sequence number " + hello.seq() + ", expected 0");
    }
    if (hello.payload().length != HELLO_BYTES) {
      throw new FrameException("HELLO payload of " + hello.payload().length + " bytes, expected " + HELLO_BYTES);
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
    Authentication.SessionKeys keys = auth.sessionKeys(serverNonce, clientNonce, r);
    return new Link(r, socket, in, out, keys.serverToClient(), keys.clientToServer());
  }
}
