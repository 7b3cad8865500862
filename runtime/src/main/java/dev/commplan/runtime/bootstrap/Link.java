package dev.commplan.runtime.bootstrap;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;

/**
 * One joined connection: rank 0 has one per other rank, the others one, to rank 0. It sends frames tagged
 * with this direction's key and numbered in sequence, and accepts only frames from the expected peer
 * rank with the next sequence number (so a frame repeated, dropped or reordered within the connection is
 * refused; the tag, checked by {@link Wire#read} with this link's receiving key, covers both fields).
 *
 * <p>Trusts its keys (from {@link Authentication}) and the handshake that made it (the peer's rank was
 * authenticated by the hello); nothing that arrives on it. Sending is thread-safe; receiving is for one
 * reader at a time.
 */
final class Link {
  final int peer;
  final Socket socket; // null: an in-memory stream (tests)
  final InputStream in;
  final OutputStream out;
  private final byte[] sendKey;
  private final byte[] recvKey;
  /** The last sequence number sent; -1 before the first (WELCOME goes out with 0, like the HELLO it answers). */
  int sendSeq;
  /** The last sequence number received. */
  int recvSeq;

  Link(int peer, Socket socket, InputStream in, OutputStream out, byte[] sendKey, byte[] recvKey) {
    this.peer = peer;
    this.socket = socket;
    this.in = in;
    this.out = out;
    this.sendKey = sendKey;
    this.recvKey = recvKey;
  }

  void send(byte type, byte[] payload, int self) throws IOException {
    synchronized (this) {
      Wire.write(out, Wire.encode(type, (byte) 0, self, ++sendSeq, payload, sendKey));
    }
  }

  /** The next frame, checked: sender rank and sequence number. */
  Wire.Frame receive(long deadline, int cap) throws IOException {
    Wire.Frame f = Wire.read(socket, in, deadline, cap, recvKey);
    if (f.rank() != peer) {
      throw new FrameException(Wire.typeName(f.type()) + " frame claims to come from rank " + f.rank()
          + " on rank " + peer + "'s connection");
    }
    if (f.seq() != recvSeq + 1) {
      throw new FrameException(Wire.typeName(f.type()) + " frame has sequence number " + f.seq() + ", expected "
          + (recvSeq + 1) + " (replayed, reordered or lost)");
    }
    recvSeq++;
    return f;
  }

  void close() {
    if (socket == null) {
      return;
    }
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing: nothing to do
    }
  }
}
