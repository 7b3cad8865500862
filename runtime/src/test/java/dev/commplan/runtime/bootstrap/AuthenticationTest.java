package dev.commplan.runtime.bootstrap;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/**
 * The authentication unit on its own, through the frame decoder (in memory, no sockets): a right tag is
 * accepted; a wrong secret, a truncated frame, a replayed hello or frame (across connections by the
 * keys, within one by {@link Link}'s sequence numbers), a reflected frame and every single flipped bit
 * are rejected; keys are per purpose, direction, connection and rank.
 */
class AuthenticationTest {
  private static final byte[] SECRET = "auth-test-secret".getBytes(StandardCharsets.UTF_8);
  private static final byte[] SERVER_NONCE = new byte[Wire.NONCE_BYTES];
  private static final byte[] CLIENT_NONCE = new byte[Wire.NONCE_BYTES];

  static {
    Arrays.fill(SERVER_NONCE, (byte) 1);
    Arrays.fill(CLIENT_NONCE, (byte) 2);
  }

  private static Authentication.SessionKeys keys(byte[] secret) {
    return Authentication.of(secret).sessionKeys(SERVER_NONCE, CLIENT_NONCE, 1);
  }

  private static Wire.Frame decode(byte[] frame, byte[] key) throws IOException {
    return Wire.read(null, new ByteArrayInputStream(frame), Long.MAX_VALUE, 4096, key);
  }

  private static byte[] helloPayload(byte[] echo) {
    return ByteBuffer.allocate(2 * Wire.NONCE_BYTES + 4).put(CLIENT_NONCE).put(echo).putInt(3).array();
  }

  @Test
  void aFrameTaggedWithTheRightKeyIsAccepted() throws IOException {
    byte[] key = keys(SECRET).clientToServer();
    byte[] payload = "contribution".getBytes(StandardCharsets.UTF_8);
    Wire.Frame f = decode(Wire.encode(Wire.DATA, (byte) 0, 1, 7, payload, key), key);
    assertArrayEquals(payload, f.payload());
    assertEquals(Wire.AUTH, f.flags());
    assertEquals(7, f.seq());
    // the hello: its own key, and it answers the challenge it was sent
    byte[] hello = Wire.encode(Wire.HELLO, (byte) 0, 1, 0, helloPayload(SERVER_NONCE), Authentication.of(SECRET).helloKey());
    Wire.Frame h = decode(hello, Authentication.of(SECRET).helloKey());
    byte[] echo = Arrays.copyOfRange(h.payload(), Wire.NONCE_BYTES, 2 * Wire.NONCE_BYTES);
    assertDoesNotThrow(() -> Authentication.requireEcho(echo, SERVER_NONCE));
  }

  @Test
  void aFrameTaggedWithAnotherSecretIsRejected() {
    byte[] mine = keys(SECRET).clientToServer();
    byte[] theirs = keys("another-secret".getBytes(StandardCharsets.UTF_8)).clientToServer();
    FrameException e = assertThrows(FrameException.class,
        () -> decode(Wire.encode(Wire.DATA, (byte) 0, 1, 1, new byte[] {1, 2, 3}, theirs), mine));
    assertTrue(e.getMessage().contains("DATA frame failed authentication (HMAC-SHA256)"), e.getMessage());
    byte[] hello = Wire.encode(Wire.HELLO, (byte) 0, 1, 0, helloPayload(SERVER_NONCE),
        Authentication.of("another-secret".getBytes(StandardCharsets.UTF_8)).helloKey());
    assertThrows(FrameException.class, () -> decode(hello, Authentication.of(SECRET).helloKey()));
  }

  @Test
  void everyTruncationOfATaggedFrameIsRejected() {
    byte[] key = keys(SECRET).clientToServer();
    byte[] good = Wire.encode(Wire.DATA, (byte) 0, 1, 1, new byte[40], key);
    for (int n = 0; n < good.length; n++) {
      byte[] cut = Arrays.copyOf(good, n);
      IOException e = assertThrows(IOException.class, () -> decode(cut, key), "cut to " + n + " bytes");
      assertTrue(e instanceof EOFException || e instanceof FrameException, e.toString());
    }
  }

  @Test
  void aHelloReplayedOnAnotherConnectionAndAFrameReplayedAcrossConnectionsAreRejected() throws IOException {
    // A hello recorded on an earlier connection answers that connection's challenge, not this one's.
    byte[] helloKey = Authentication.of(SECRET).helloKey();
    byte[] oldChallenge = Authentication.nonce();
    byte[] newChallenge = Authentication.nonce();
    byte[] recorded = Wire.encode(Wire.HELLO, (byte) 0, 1, 0, helloPayload(oldChallenge), helloKey);
    Wire.Frame replayed = decode(recorded, helloKey); // its tag is genuine
    byte[] echo = Arrays.copyOfRange(replayed.payload(), Wire.NONCE_BYTES, 2 * Wire.NONCE_BYTES);
    FrameException e = assertThrows(FrameException.class, () -> Authentication.requireEcho(echo, newChallenge));
    assertTrue(e.getMessage().contains("does not answer this connection's challenge (replayed?)"), e.getMessage());
    // A session frame recorded on one connection, replayed on another (other nonces, so other keys).
    byte[] first = keys(SECRET).clientToServer();
    byte[] second = Authentication.of(SECRET).sessionKeys(SERVER_NONCE, Authentication.nonce(), 1).clientToServer();
    byte[] frame = Wire.encode(Wire.DATA, (byte) 0, 1, 1, new byte[] {9}, first);
    assertThrows(FrameException.class, () -> decode(frame, second));
    // Reflected: a frame rank 0 sent, sent back to it, fails under the other direction's key.
    byte[] fromRankZero = Wire.encode(Wire.RESULT, (byte) 0, 0, 1, new byte[] {9}, keys(SECRET).serverToClient());
    assertThrows(FrameException.class, () -> decode(fromRankZero, keys(SECRET).clientToServer()));
  }

  @Test
  void aFrameRepeatedOrReorderedWithinAConnectionIsRejectedByItsLink() throws IOException {
    Authentication.SessionKeys k = keys(SECRET);
    java.io.ByteArrayOutputStream wire = new java.io.ByteArrayOutputStream();
    Link sender = new Link(0, null, InputStream.nullInputStream(), wire, k.clientToServer(), k.serverToClient());
    sender.send(Wire.DATA, new byte[] {1}, 1);
    byte[] first = wire.toByteArray();
    sender.send(Wire.DATA, new byte[] {2}, 1);
    byte[] second = Arrays.copyOfRange(wire.toByteArray(), first.length, wire.size());
    // in order: accepted
    Link receiver = receiver(k, first, second);
    assertArrayEquals(new byte[] {1}, receiver.receive(Long.MAX_VALUE, 4096).payload());
    assertArrayEquals(new byte[] {2}, receiver.receive(Long.MAX_VALUE, 4096).payload());
    // the first frame again (replayed), or the second before the first (reordered): refused
    Link replay = receiver(k, first, first);
    replay.receive(Long.MAX_VALUE, 4096);
    FrameException e = assertThrows(FrameException.class, () -> replay.receive(Long.MAX_VALUE, 4096));
    assertTrue(e.getMessage().contains("sequence number 1, expected 2 (replayed, reordered or lost)"), e.getMessage());
    assertThrows(FrameException.class, () -> receiver(k, second, first).receive(Long.MAX_VALUE, 4096));
    // a genuine frame of rank 1's connection does not pass on rank 2's
    Link other = new Link(2, null, new ByteArrayInputStream(first), java.io.OutputStream.nullOutputStream(),
        k.serverToClient(), k.clientToServer());
    assertThrows(FrameException.class, () -> other.receive(Long.MAX_VALUE, 4096));
  }

  private static Link receiver(Authentication.SessionKeys k, byte[] a, byte[] b) {
    byte[] both = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, both, a.length, b.length);
    return new Link(1, null, new ByteArrayInputStream(both), java.io.OutputStream.nullOutputStream(),
        k.serverToClient(), k.clientToServer());
  }

  @Test
  void everySingleFlippedBitIsRejected() {
    byte[] key = keys(SECRET).clientToServer();
    byte[] good = Wire.encode(Wire.DATA, (byte) 0, 1, 5, new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, key);
    for (int bit = 0; bit < good.length * 8; bit++) {
      byte[] bad = good.clone();
      bad[bit / 8] ^= (byte) (1 << (bit % 8));
      int b = bit;
      IOException e = assertThrows(IOException.class, () -> decode(bad, key), "bit " + b + " flipped");
      assertTrue(e instanceof FrameException || e instanceof EOFException, e.toString());
    }
  }

  @Test
  void taggedAndUntaggedFramesFollowTheRule() throws IOException {
    byte[] key = keys(SECRET).clientToServer();
    FrameException untagged = assertThrows(FrameException.class,
        () -> decode(Wire.encode(Wire.DATA, (byte) 0, 1, 1, new byte[0], null), key));
    assertTrue(untagged.getMessage().contains("DATA frame is not authenticated, but a secret is set here"));
    FrameException unexpected = assertThrows(FrameException.class,
        () -> decode(Wire.encode(Wire.DATA, (byte) 0, 1, 1, new byte[0], key), null));
    assertTrue(unexpected.getMessage().contains("DATA frame is authenticated (the peer has a secret)"));
    // an untagged ERROR is accepted during a handshake only (a rejection sent before any key exists)
    byte[] error = Wire.encode(Wire.ERROR, (byte) 0, 0, 0, Wire.cut("rejected"), null);
    assertEquals(Wire.ERROR, Wire.read(null, new ByteArrayInputStream(error), Long.MAX_VALUE, 4096, key, true).type());
    assertThrows(FrameException.class, () -> decode(error, key));
    // CHALLENGE is never tagged, and never expected once a key is in use
    byte[] challenge = Wire.encode(Wire.CHALLENGE, Wire.AUTH, 0, 0, new byte[Wire.NONCE_BYTES + 4], key);
    assertEquals(Wire.HEADER_BYTES + Wire.NONCE_BYTES + 4, challenge.length);
    assertEquals(Wire.CHALLENGE, decode(challenge, null).type());
    assertThrows(FrameException.class, () -> decode(challenge, key));
  }

  @Test
  void keysArePerPurposeDirectionConnectionAndRank() {
    Authentication auth = Authentication.of(SECRET);
    Authentication.SessionKeys k = auth.sessionKeys(SERVER_NONCE, CLIENT_NONCE, 1);
    HexFormat hex = HexFormat.of();
    java.util.Set<String> distinct = new java.util.HashSet<>(java.util.List.of(hex.formatHex(auth.helloKey()),
        hex.formatHex(k.serverToClient()), hex.formatHex(k.clientToServer()),
        hex.formatHex(auth.sessionKeys(SERVER_NONCE, CLIENT_NONCE, 2).clientToServer()),
        hex.formatHex(auth.sessionKeys(CLIENT_NONCE, SERVER_NONCE, 1).clientToServer()),
        hex.formatHex(SECRET)));
    assertEquals(6, distinct.size(), "every key differs from the others and from the secret");
    assertArrayEquals(k.clientToServer(), auth.sessionKeys(SERVER_NONCE, CLIENT_NONCE, 1).clientToServer(),
        "both ends derive the same keys");
    Authentication none = Authentication.of(null);
    assertFalse(none.enabled());
    assertNull(none.helloKey());
    assertNull(none.sessionKeys(SERVER_NONCE, CLIENT_NONCE, 1).clientToServer());
    assertFalse(auth.toString().contains("auth-test-secret"));
  }

  @Test
  void noncesAreFresh() {
    byte[] a = Authentication.nonce();
    byte[] b = Authentication.nonce();
    assertEquals(Wire.NONCE_BYTES, a.length);
    assertFalse(Arrays.equals(a, b));
  }
}
