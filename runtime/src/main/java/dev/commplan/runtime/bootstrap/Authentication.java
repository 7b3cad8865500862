package dev.commplan.runtime.bootstrap;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Authentication of the rendezvous's frames, and nothing else: the keys derived from the shared secret
 * (the hello key, and one key per direction of each connection), HMAC-SHA256 tags and their
 * constant-time check, the rule of which frames must carry a tag, fresh nonces, and the check that a
 * hello answers this connection's challenge (so a hello recorded earlier cannot be replayed on a new
 * connection). Within one connection, repeated, dropped or reordered frames are caught by {@link Link}'s
 * sequence numbers, which the tags cover.
 *
 * <p>Trusts: the secret (the user distributes it), the JDK's {@code HmacSHA256} and {@link
 * SecureRandom}. Trusts nothing a peer sends: every byte it checks comes from the network. Never puts the
 * secret, a key or a tag into a message.
 */
final class Authentication {
  /** The length of a tag (HMAC-SHA256). */
  static final int TAG_BYTES = 32;

  private static final SecureRandom RANDOM = new SecureRandom();

  /** One connection's two keys, or nulls without a secret. */
  record SessionKeys(byte[] serverToClient, byte[] clientToServer) {}

  private final byte[] secret; // null: no authentication
  private final byte[] helloKey;

  private Authentication(byte[] secret) {
    this.secret = secret;
    this.helloKey = secret == null ? null : derive(secret, "hello");
  }

  /** Authentication with {@code secret}, or none when it is null. */
  static Authentication of(byte[] secret) {
    return new Authentication(secret);
  }

  /** Whether frames are tagged at all. */
  boolean enabled() {
    return secret != null;
  }

  /** The key of the hello (the only tagged frame before a connection has its own keys); null without a secret. */
  byte[] helloKey() {
    return helloKey;
  }

  /**
   * The keys of the connection whose handshake exchanged these nonces, for rank {@code rank}: each
   * direction of each connection has its own, so frames cannot be replayed across connections or
   * reflected back to their sender.
   */
  SessionKeys sessionKeys(byte[] serverNonce, byte[] clientNonce, int rank) {
    if (secret == null) {
      return new SessionKeys(null, null);
    }
    byte[] rankBytes = ByteBuffer.allocate(4).putInt(rank).array();
    return new SessionKeys(derive(secret, "s2c", serverNonce, clientNonce, rankBytes),
        derive(secret, "c2s", serverNonce, clientNonce, rankBytes));
  }

  /** A fresh random nonce of {@link Wire#NONCE_BYTES} bytes. */
  static byte[] nonce() {
    byte[] n = new byte[Wire.NONCE_BYTES];
    RANDOM.nextBytes(n);
    return n;
  }

  /**
   * Checks, in constant time, that a hello echoes this connection's challenge nonce: the hello's tag
   * covers the echo, so a hello recorded on another connection fails here.
   */
  static void requireEcho(byte[] echo, byte[] serverNonce) throws FrameException {
    if (!MessageDigest.isEqual(echo, serverNonce)) {
      throw new FrameException("HELLO does not answer this connection's challenge (replayed?)");
    }
  }

  /**
   * Which frames must carry a tag: with a key, every frame (but CHALLENGE, never tagged, and, during a
   * handshake, an untagged ERROR: a rejection sent before any key is shared); without one, none.
   *
   * @param tagged whether the frame's flags say a tag follows
   * @param keyed whether this side expects a key
   */
  static void requireTagRule(byte type, boolean tagged, boolean keyed, boolean handshake) throws FrameException {
    if (type == Wire.CHALLENGE || (handshake && type == Wire.ERROR && !tagged)) {
      return;
    }
    if (keyed && !tagged) {
      throw new FrameException(Wire.typeName(type) + " frame is not authenticated, but a secret is set here ("
          + Rendezvous.SECRET_ENV + "): set the same secret on every rank");
    }
    if (!keyed && tagged) {
      throw new FrameException(Wire.typeName(type) + " frame is authenticated (the peer has a secret), but no secret is set"
          + " here: set " + Rendezvous.SECRET_ENV + " to the same value on every rank");
    }
  }

  /** The tag of {@code data[off, off + len)} under {@code key}. */
  static byte[] tag(byte[] key, byte[] data, int off, int len) {
    Mac mac = mac(key);
    mac.update(data, off, len);
    return mac.doFinal();
  }

  /** Checks, in constant time, that {@code tag} is the tag of {@code header} and {@code payload} under {@code key}. */
  static void verify(byte[] key, byte type, byte[] header, byte[] payload, byte[] tag) throws FrameException {
    Mac mac = mac(key);
    mac.update(header);
    mac.update(payload);
    if (!MessageDigest.isEqual(mac.doFinal(), tag)) {
      throw new FrameException(Wire.typeName(type) + " frame failed authentication (HMAC-SHA256): the secrets differ, or"
          + " the frame was altered or replayed");
    }
  }

  /** A key derived from the secret for one purpose: HMAC(secret, label || parts). */
  static byte[] derive(byte[] secret, String label, byte[]... parts) {
    Mac mac = mac(secret);
    mac.update(("commplan-rendezvous/" + Wire.VERSION + " " + label).getBytes(StandardCharsets.UTF_8));
    for (byte[] p : parts) {
      mac.update(p);
    }
    return mac.doFinal();
  }

  private static Mac mac(byte[] key) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is required of every Java platform", e);
    }
  }

  @Override
  public String toString() {
    return "Authentication[" + (secret == null ? "none" : "HMAC-SHA256") + "]"; // never the secret
  }
}
