package dev.commplan.runtime.bootstrap;

import dev.commplan.runtime.launch.LaunchEnvironment;
import dev.commplan.runtime.launch.ProcessInfo;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * A small TCP rendezvous for the processes of one job, to pass an NCCL unique id (and other small data,
 * such as plan fingerprints) before any communicator exists. Rank 0 listens on the port; the others
 * connect to it (retrying with backoff until the join timeout) and talk only to it.
 *
 * <p><b>Protocol.</b> Frames of fixed binary fields and byte arrays (magic {@code CPRV}, version, type,
 * flags, rank, sequence, length, payload, optional tag); nothing a peer sends is deserialized as Java
 * objects. A length above the cap is refused before anything is allocated: {@link Options#maxPayload}
 * once joined, 1 KiB before. Every read has a deadline (the socket timeout is set to what is left of
 * it). On connecting, rank 0 sends a challenge (a fresh random nonce); the joining rank answers with its
 * rank, the job's size, its own nonce and the echoed challenge. Rank 0 refuses (and closes that
 * connection only, keeping on serving the others) any frame that breaks the protocol, a rank out of
 * range, a size that differs, a rank already joined, or a reply that does not echo its challenge, and
 * logs one line per rejected connection (its address and the reason). Once every rank has joined, rank 0
 * keeps listening until the rendezvous closes, to tell a late process why it cannot join (a second
 * process claiming a rank hears "two processes claim rank N").
 *
 * <p><b>Authentication</b>, when a shared secret is set ({@link #SECRET_ENV}, or {@link
 * Options#withSecret}): every frame but the challenge carries an HMAC-SHA256 tag, compared in constant
 * time. The hello is tagged with a key derived from the secret and covers the challenge, so an old hello
 * replayed on a new connection fails; after it, each direction of each connection has its own key
 * derived from the secret and both nonces, and its own sequence numbers, so frames cannot be replayed
 * across connections, reflected, reordered or repeated. What it does not do: encrypt (anyone on the path
 * can read the unique id), distribute the secret (that is the user's job), or protect NCCL's own
 * traffic, which is unauthenticated. Without a secret nothing is authenticated.
 *
 * <p><b>Operations</b> (collective: every rank calls them in the same order): {@link #broadcast},
 * {@link #allGather}, {@link #barrier}. Each has a deadline ({@link Options#opTimeout} on rank 0; the
 * others wait up to twice it, at most 10 s more, so that rank 0's report arrives first); a peer that
 * closes its connection or sends nothing in time fails the operation on rank 0 naming it, and rank 0
 * tells the other ranks, which fail with that reason. After a failure the rendezvous is unusable.
 *
 * <p><b>The code</b>, one unit per concern, each reviewable alone: this class is the public facade and
 * the {@link Options}; {@code Wire} is the framing (layout, caps, parsing); {@code Authentication} the
 * HMAC keys, tags, nonces and replay checks; {@code Link} one joined connection (sequence numbers);
 * {@code Admission} rank 0's door (accept loop, admitting or rejecting each connection, late processes),
 * with {@code ServerHandshake} checking each hello and {@code RejectionLog} logging each rejection; {@code
 * RendezvousServer} rank 0's join, per-peer readers and failure fan-out; {@code RendezvousClient} the
 * other ranks (connect with retry, handshake); {@code Collectives} the operations on a joined rendezvous.
 *
 * <p>Used by one thread.
 */
public final class Rendezvous implements AutoCloseable {
  /** The environment variable holding the shared secret (UTF-8); unset means no authentication. */
  public static final String SECRET_ENV = "COMMPLAN_RENDEZVOUS_SECRET";

  /** The default cap on an operation's payload once joined: 16 MiB. */
  public static final int DEFAULT_MAX_PAYLOAD = 16 << 20;

  /**
   * How the rendezvous behaves.
   *
   * @param joinTimeout how long {@link #join} waits for every rank (rank 0) or for rank 0 (the others)
   * @param opTimeout the deadline of each operation
   * @param handshakeTimeout how long rank 0 gives one connection to complete its hello
   * @param maxPayload the cap on one frame's payload once joined (an all-gather's result included)
   * @param secret the shared secret, or null for none
   */
  public record Options(Duration joinTimeout, Duration opTimeout, Duration handshakeTimeout, int maxPayload,
      byte[] secret) {
    /**
     * Checks the options and copies the secret.
     *
     * @param joinTimeout how long {@link #join} waits for every rank (rank 0) or for rank 0 (the others);
     *     positive
     * @param opTimeout the deadline of each operation; positive
     * @param handshakeTimeout how long rank 0 gives one connection to complete its hello; positive
     * @param maxPayload the cap on one frame's payload once joined, at least 1024 bytes
     * @param secret the shared secret, or null for none; not empty
     * @throws IllegalArgumentException if a timeout is not positive, the cap is below 1 KiB, or the secret is
     *     empty
     */
    public Options {
      requirePositive(joinTimeout, "joinTimeout");
      requirePositive(opTimeout, "opTimeout");
      requirePositive(handshakeTimeout, "handshakeTimeout");
      if (maxPayload < 1024) {
        throw new IllegalArgumentException("maxPayload must be >= 1024 bytes, was " + maxPayload);
      }
      if (secret != null && secret.length == 0) {
        throw new IllegalArgumentException("the rendezvous secret is empty: set a non-empty " + SECRET_ENV
            + ", or unset it for no authentication");
      }
      secret = secret == null ? null : secret.clone();
    }

    /**
     * Join and operation timeouts of 5 minutes, a 10-second handshake, a 16 MiB cap, and the secret from
     * {@value #SECRET_ENV} when it is set.
     *
     * @return the default options, read from the environment on each call
     */
    public static Options defaults() {
      String s = System.getenv(SECRET_ENV);
      return new Options(Duration.ofMinutes(5), Duration.ofMinutes(5), Duration.ofSeconds(10), DEFAULT_MAX_PAYLOAD,
          s == null ? null : s.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * These options with another join timeout.
     *
     * @param d how long {@link #join} waits; positive
     * @return new options
     */
    public Options withJoinTimeout(Duration d) {
      return new Options(d, opTimeout, handshakeTimeout, maxPayload, secret);
    }

    /**
     * These options with another operation deadline.
     *
     * @param d the deadline of each operation; positive
     * @return new options
     */
    public Options withOpTimeout(Duration d) {
      return new Options(joinTimeout, d, handshakeTimeout, maxPayload, secret);
    }

    /**
     * These options with another handshake timeout.
     *
     * @param d how long rank 0 gives one connection to complete its hello; positive
     * @return new options
     */
    public Options withHandshakeTimeout(Duration d) {
      return new Options(joinTimeout, opTimeout, d, maxPayload, secret);
    }

    /**
     * These options with another payload cap.
     *
     * @param bytes the cap on one frame's payload once joined, at least 1024
     * @return new options
     */
    public Options withMaxPayload(int bytes) {
      return new Options(joinTimeout, opTimeout, handshakeTimeout, bytes, secret);
    }

    /**
     * With {@code secret} (UTF-8), or none when null.
     *
     * @param s the secret, or null for no authentication
     * @return new options
     */
    public Options withSecret(String s) {
      return new Options(joinTimeout, opTimeout, handshakeTimeout, maxPayload,
          s == null ? null : s.getBytes(StandardCharsets.UTF_8));
    }

    /** {@return a copy of the shared secret, or null for none} */
    @Override
    public byte[] secret() {
      return secret == null ? null : secret.clone();
    }

    @Override
    public String toString() {
      return "Options[join " + joinTimeout + ", op " + opTimeout + ", handshake " + handshakeTimeout + ", cap "
          + maxPayload + " B, " + (secret == null ? "no secret" : "secret set") + "]";
    }

    private static void requirePositive(Duration d, String name) {
      Objects.requireNonNull(d, name);
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + " must be positive, was " + d);
      }
    }
  }

  private final int rank;
  private final int size;
  private final String where; // host:port, for messages
  private final Collectives ops;

  private Rendezvous(int rank, int size, String where, Collectives ops) {
    this.rank = rank;
    this.size = size;
    this.where = where;
    this.ops = ops;
  }

  /**
   * Joins the job {@code info} describes ({@link LaunchEnvironment#fromEnvironment()}).
   *
   * @param info this process's rank, the job's size and rank 0's address and port
   * @param options timeouts, cap and secret
   * @return the joined rendezvous, which the caller closes
   */
  public static Rendezvous join(ProcessInfo info, Options options) {
    return join(info.rank(), info.size(), info.masterAddr(), info.masterPort(), options);
  }

  /**
   * Joins: rank 0 listens on {@code port} and waits for every other rank; the others connect to {@code
   * host:port} and wait until every rank has joined.
   *
   * @param rank this process's rank, in {@code [0, size)}
   * @param size the number of ranks
   * @param host rank 0's host as the others reach it; on rank 0, a loopback host makes it listen on
   *     loopback only, anything else on every interface
   * @param port rank 0's TCP port
   * @param options timeouts, cap and secret
   * @return the joined rendezvous, which the caller closes
   * @throws RendezvousException if the join timeout passes (naming the ranks that never came), rank 0
   *     rejects this rank (with its reason), or the ranks disagree on the size or the secret
   */
  public static Rendezvous join(int rank, int size, String host, int port, Options options) {
    return join(rank, size, host, port, options, RejectionLog.defaultLogger());
  }

  /** {@link #join(int, int, String, int, Options)}, rank 0 logging rejected connections to {@code log}. */
  static Rendezvous join(int rank, int size, String host, int port, Options options, System.Logger log) {
    Objects.requireNonNull(options, "options");
    if (size < 1 || rank < 0 || rank >= size) {
      throw new IllegalArgumentException("rank " + rank + " is not in [0, " + size + ")");
    }
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port " + port + " is not in [1, 65535]");
    }
    if (size > 1 && host == null) {
      throw new IllegalArgumentException("the rendezvous needs rank 0's host: set MASTER_ADDR (and MASTER_PORT) on"
          + " every rank, or pass it explicitly");
    }
    String where = (host == null ? "127.0.0.1" : host) + ":" + port;
    if (size == 1) {
      return new Rendezvous(0, 1, where, Collectives.alone(where, options));
    }
    if (rank == 0) {
      RendezvousServer server = RendezvousServer.serve(size, host, port, where, options, log);
      return new Rendezvous(0, size, where, Collectives.rankZero(size, where, options, server));
    }
    Link toRankZero = RendezvousClient.connect(rank, size, host, port, where, options);
    return new Rendezvous(rank, size, where, Collectives.member(rank, size, where, options, toRankZero));
  }

  /** {@return this process's rank} */
  public int rank() {
    return rank;
  }

  /** {@return the number of ranks} */
  public int size() {
    return size;
  }

  /** {@return how many connections rank 0 rejected during the join; 0 on other ranks} */
  public long rejectedConnections() {
    return ops.rejectedConnections();
  }

  /**
   * Rank 0's {@code data} on every rank: rank 0 passes it (up to the cap), the others pass anything
   * (ignored, may be null). Collective.
   *
   * @param data on rank 0, the bytes to broadcast; ignored elsewhere
   * @return rank 0's bytes, a new array on every rank
   * @throws RendezvousException on a peer's failure or the operation deadline, naming the rank
   */
  public byte[] broadcast(byte[] data) {
    return ops.broadcast(data);
  }

  /**
   * Every rank's {@code data}, indexed by rank. Collective; contributions may differ in length (their
   * sum is capped by {@link Options#maxPayload}).
   *
   * @param data this rank's contribution
   * @return every rank's contribution, indexed by rank
   * @throws RendezvousException on a peer's failure or the operation deadline, naming the rank
   */
  public List<byte[]> allGather(byte[] data) {
    return ops.allGather(data);
  }

  /** Returns once every rank has called it. */
  public void barrier() {
    ops.barrier();
  }

  /**
   * Tells the other ranks this one failed ({@code reason}), so they fail at once rather than at their
   * deadline, and closes. Rank 0 tells everyone; another rank tells rank 0, which tells the rest at its
   * next operation.
   *
   * @param reason why this rank failed, for the other ranks' messages
   */
  public void abort(String reason) {
    ops.abort(reason);
  }

  /** Closes every connection; idempotent. */
  @Override
  public void close() {
    ops.close();
  }

  @Override
  public String toString() {
    return "Rendezvous[rank " + rank + " of " + size + " at " + where + (ops.isClosed() ? ", closed" : "") + "]";
  }
}
