package dev.commplan.runtime.bootstrap;

import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Rank 0's record, for the operator, of the connections it rejected: one {@link System.Logger.Level#WARNING}
 * line per rejected peer, naming the peer's address and the reason, on the logger {@value #LOGGER}
 * (System.Logger: java.util.logging unless the application installs another backend). Bounded: after
 * {@value #MAX_LINES} lines (a flood of bad connections must not flood the log) rejections are only
 * counted, and one line gives their number when the rendezvous closes.
 *
 * <p>The reasons are rank 0's own words: the rule broken and numbers read from the frame at most, never
 * text a peer sent, and never the secret, a key or a tag.
 */
final class RejectionLog {
  /** The logger's name. */
  static final String LOGGER = "dev.commplan.runtime.bootstrap.Rendezvous";

  /** The most lines logged one by one per rendezvous. */
  static final int MAX_LINES = 100;

  private final System.Logger log;
  private final String where;
  private final AtomicLong count = new AtomicLong();
  private final AtomicBoolean summarized = new AtomicBoolean();

  RejectionLog(System.Logger log, String where) {
    this.log = log;
    this.where = where;
  }

  /** The default logger, {@value #LOGGER}. */
  static System.Logger defaultLogger() {
    return System.getLogger(LOGGER);
  }

  /** Records one rejected connection. */
  void rejected(Socket socket, String reason) {
    long n = count.incrementAndGet();
    if (n <= MAX_LINES) {
      log.log(System.Logger.Level.WARNING, "rendezvous at " + where + ": rank 0 rejected a connection from "
          + address(socket.getRemoteSocketAddress()) + ": " + reason
          + (n == MAX_LINES ? " (" + MAX_LINES + " rejections logged: further ones are only counted, and their number"
              + " logged when the rendezvous closes)" : ""));
    }
  }

  /** Once, when the rendezvous closes: how many rejections were not logged one by one, if any. */
  void summary() {
    long n = count.get();
    if (n > MAX_LINES && summarized.compareAndSet(false, true)) {
      log.log(System.Logger.Level.WARNING, "rendezvous at " + where + ": rank 0 rejected " + (n - MAX_LINES)
          + " more connections than it logged (" + n + " in all)");
    }
  }

  /** {@code host:port} ({@code [v6]:port}), without a host name lookup. */
  static String address(SocketAddress a) {
    if (a instanceof InetSocketAddress i && i.getAddress() != null) {
      String host = i.getAddress().getHostAddress();
      return (i.getAddress() instanceof Inet6Address ? "[" + host + "]" : host) + ":" + i.getPort();
    }
    return String.valueOf(a);
  }
}
