package dev.commplan.runtime.bootstrap;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Framing: the layout of the rendezvous's frames, their size limits, and their parsing. Layout
 * (big-endian): magic {@code "CPRV"} (4), version (1), type (1), flags (1), sender rank (4), sequence
 * (4), payload length (4), payload, and, when the {@link #AUTH} flag is set, a 32-byte HMAC-SHA256 tag
 * over everything before it. Nothing is deserialized but these fixed fields and byte arrays; a length
 * above the reader's cap is refused before anything is allocated; every read has a deadline.
 *
 * <p>Trusts nothing it reads. Whether a frame must be tagged, and whether its tag is right, it leaves to
 * {@link Authentication}; which sender and sequence number a connection expects, to {@link Link}; what
 * a payload means, to the handshake and the collectives.
 */
final class Wire {
  static final int MAGIC = 0x43505256; // "CPRV"
  static final byte VERSION = 1;
  static final int HEADER_BYTES = 4 + 1 + 1 + 1 + 4 + 4 + 4;
  static final int TAG_BYTES = Authentication.TAG_BYTES;
  static final int NONCE_BYTES = 16;

  /** Flag: a tag follows (on CHALLENGE, which has none: "this server requires authenticated frames"). */
  static final byte AUTH = 1;

  static final byte CHALLENGE = 1; // server -> client: server nonce, size
  static final byte HELLO = 2; // client -> server: client nonce, echoed server nonce, size
  static final byte WELCOME = 3; // server -> client
  static final byte READY = 4; // server -> client: every rank has joined
  static final byte DATA = 5; // client -> server: op index, op kind, contribution
  static final byte RESULT = 6; // server -> client: op index, op kind, result
  static final byte ERROR = 7; // either way: UTF-8 reason
  static final byte MAX_TYPE = ERROR;

  /** The largest handshake payload (HELLO: 16 + 16 + 4; ERROR reasons are cut to fit). */
  static final int HANDSHAKE_CAP = 1024;

  record Frame(byte type, byte flags, int rank, int seq, byte[] payload) {}

  private Wire() {}

  static String typeName(byte type) {
    return switch (type) {
      case CHALLENGE -> "CHALLENGE";
      case HELLO -> "HELLO";
      case WELCOME -> "WELCOME";
      case READY -> "READY";
      case DATA -> "DATA";
      case RESULT -> "RESULT";
      case ERROR -> "ERROR";
      default -> "type " + type;
    };
  }

  /** The bytes of a frame; tagged with {@code key} when non-null (CHALLENGE is never tagged). */
  static byte[] encode(byte type, byte flags, int rank, int seq, byte[] payload, byte[] key) {
    boolean tagged = key != null && type != CHALLENGE;
    if (tagged) {
      flags |= AUTH;
    }
    ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES + payload.length + (tagged ? TAG_BYTES : 0));
    b.putInt(MAGIC).put(VERSION).put(type).put(flags).putInt(rank).putInt(seq).putInt(payload.length).put(payload);
    if (tagged) {
      b.put(Authentication.tag(key, b.array(), 0, HEADER_BYTES + payload.length));
    }
    return b.array();
  }

  static void write(OutputStream out, byte[] frame) throws IOException {
    out.write(frame);
    out.flush();
  }

  /**
   * Reads one frame, every byte by {@code deadlineNanos} ({@link System#nanoTime()}). With {@code key}
   * non-null the frame must be tagged with it (CHALLENGE excepted); with {@code key} null it must not be.
   *
   * @throws FrameException for anything that breaks the protocol
   * @throws SocketTimeoutException when the deadline passes
   * @throws EOFException when the peer closes the connection, {@code started} telling whether mid-frame
   */
  static Frame read(Socket socket, InputStream in, long deadlineNanos, int cap, byte[] key) throws IOException {
    return read(socket, in, deadlineNanos, cap, key, false);
  }

  /**
   * Like {@link #read(Socket, InputStream, long, int, byte[])}; with {@code handshake} an untagged ERROR
   * frame is accepted even with a key (rank 0 rejects a hello before any session key exists).
   */
  static Frame read(Socket socket, InputStream in, long deadlineNanos, int cap, byte[] key, boolean handshake)
      throws IOException {
    byte[] header = new byte[HEADER_BYTES];
    readFully(socket, in, header, deadlineNanos);
    ByteBuffer h = ByteBuffer.wrap(header);
    int magic = h.getInt();
    if (magic != MAGIC) {
      throw new FrameException(String.format("bad magic 0x%08x (not a CommPlan rendezvous frame)", magic));
    }
    byte version = h.get();
    if (version != VERSION) {
      throw new FrameException("protocol version " + version + ", this side speaks " + VERSION
          + " (the ranks run different CommPlan versions)");
    }
    byte type = h.get();
    if (type < CHALLENGE || type > MAX_TYPE) {
      throw new FrameException("unknown frame type " + type);
    }
    if (type == CHALLENGE && key != null) { // only ever the first frame, read without a key
      throw new FrameException("unexpected CHALLENGE frame");
    }
    byte flags = h.get();
    if ((flags & ~AUTH) != 0) {
      throw new FrameException("unknown flags 0x" + Integer.toHexString(flags & 0xff));
    }
    int rank = h.getInt();
    int seq = h.getInt();
    int length = h.getInt();
    if (length < 0 || length > cap) {
      throw new FrameException("payload length " + Integer.toUnsignedString(length) + " exceeds the cap of " + cap
          + " bytes");
    }
    boolean tagged = (flags & AUTH) != 0 && type != CHALLENGE;
    Authentication.requireTagRule(type, tagged, key != null, handshake); // before anything is allocated
    byte[] payload = new byte[length];
    readFully(socket, in, payload, deadlineNanos);
    if (tagged) {
      byte[] tag = new byte[TAG_BYTES];
      readFully(socket, in, tag, deadlineNanos);
      Authentication.verify(key, type, header, payload, tag);
    }
    return new Frame(type, flags, rank, seq, payload);
  }

  /** Reads {@code b.length} bytes; the socket's read timeout is set to what is left before each read. */
  static void readFully(Socket socket, InputStream in, byte[] b, long deadlineNanos) throws IOException {
    int off = 0;
    while (off < b.length) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        throw new SocketTimeoutException("deadline passed with " + off + " of " + b.length + " bytes read");
      }
      if (socket != null) { // null: an in-memory stream (tests)
        socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, (left + 999_999) / 1_000_000)));
      }
      int n = in.read(b, off, b.length - off);
      if (n < 0) {
        throw new EOFException(off == 0 ? "connection closed" : "connection closed mid-frame");
      }
      off += n;
    }
  }

  /** A reason as UTF-8, cut to fit a handshake frame (an ERROR payload). */
  static byte[] cut(String message) {
    byte[] b = message.getBytes(StandardCharsets.UTF_8);
    return b.length <= HANDSHAKE_CAP - 64 ? b : Arrays.copyOf(b, HANDSHAKE_CAP - 64);
  }
}
