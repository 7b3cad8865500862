package dev.commplan.runtime.launch;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Reads this process's rank, size, local rank and rendezvous address from the variables a launcher sets.
 *
 * <table>
 *   <caption>Variables read</caption>
 *   <tr><th>launcher</th><th>rank</th><th>size</th><th>local rank</th></tr>
 *   <tr><td>torchrun (or set by hand)</td><td>{@code RANK}</td><td>{@code WORLD_SIZE}</td><td>{@code LOCAL_RANK}</td></tr>
 *   <tr><td>Open MPI {@code mpirun}</td><td>{@code OMPI_COMM_WORLD_RANK}</td><td>{@code OMPI_COMM_WORLD_SIZE}</td><td>{@code OMPI_COMM_WORLD_LOCAL_RANK}</td></tr>
 *   <tr><td>Slurm {@code srun}</td><td>{@code SLURM_PROCID}</td><td>{@code SLURM_NTASKS} (or {@code SLURM_NPROCS})</td><td>{@code SLURM_LOCALID}</td></tr>
 * </table>
 *
 * <p><b>Precedence:</b> explicit {@link Overrides} &gt; torchrun &gt; Open MPI &gt; Slurm. A launcher
 * started inside another sets its own variables for its own processes and those are the ones we are
 * (torchrun workers inside an {@code srun} task; {@code mpirun} processes inside a Slurm allocation), so
 * the innermost, most specific launcher wins; a lower one's variables are then ignored. Each value
 * overridden explicitly replaces the environment's, one by one.
 *
 * <p><b>Rendezvous address:</b> the host is {@link Overrides#masterAddr}, else {@code MASTER_ADDR}, else
 * {@code 127.0.0.1} when the job is on one node ({@code LOCAL_WORLD_SIZE == WORLD_SIZE}, {@code
 * OMPI_COMM_WORLD_LOCAL_SIZE == OMPI_COMM_WORLD_SIZE}, {@code SLURM_NNODES == 1}, or one rank), else under
 * Slurm the first host of {@code SLURM_STEP_NODELIST}/{@code SLURM_JOB_NODELIST}; else null (the
 * rendezvous then asks for it). The port is {@link Overrides#masterPort}, else {@value #PORT_ENV}, else
 * {@code MASTER_PORT} (plus one when {@code TORCHELASTIC_USE_AGENT_STORE=True}: torchrun's static
 * rendezvous keeps its own store listening on {@code MASTER_PORT}), else {@value #DEFAULT_PORT}.
 *
 * <p><b>Errors</b> ({@link IllegalArgumentException}, naming the variables and their values): a launcher's
 * rank without its size or the other way round, a value that is not an integer, a size below 1, a rank or
 * local rank outside {@code [0, size)}, a local rank not below the launcher's local size, a port outside
 * {@code [1, 65535]}. A local rank that is not set defaults to the rank (one node assumed).
 */
public final class LaunchEnvironment {
  /** The variable that sets the rendezvous port, ahead of {@code MASTER_PORT}. */
  public static final String PORT_ENV = "COMMPLAN_RENDEZVOUS_PORT";

  /** The rendezvous port when none is given: torchrun's default. */
  public static final int DEFAULT_PORT = 29500;

  private LaunchEnvironment() {}

  /**
   * Values given explicitly; each non-null one overrides what the environment says.
   *
   * @param rank this process's rank, or null
   * @param size the number of ranks, or null
   * @param localRank the local rank (picks the GPU), or null
   * @param masterAddr rank 0's host, or null
   * @param masterPort the rendezvous port, or null
   */
  public record Overrides(Integer rank, Integer size, Integer localRank, String masterAddr, Integer masterPort) {
    /** Nothing overridden. */
    public static final Overrides NONE = new Overrides(null, null, null, null, null);

    /**
     * These overrides with the rank set.
     *
     * @param value this process's rank
     * @return new overrides
     */
    public Overrides withRank(int value) {
      return new Overrides(value, size, localRank, masterAddr, masterPort);
    }

    /**
     * These overrides with the size set.
     *
     * @param value the number of ranks
     * @return new overrides
     */
    public Overrides withSize(int value) {
      return new Overrides(rank, value, localRank, masterAddr, masterPort);
    }

    /**
     * These overrides with the local rank set.
     *
     * @param value this process's index on its node (picks the GPU)
     * @return new overrides
     */
    public Overrides withLocalRank(int value) {
      return new Overrides(rank, size, value, masterAddr, masterPort);
    }

    /**
     * These overrides with rank 0's host set.
     *
     * @param value rank 0's host, as the other ranks reach it
     * @return new overrides
     */
    public Overrides withMasterAddr(String value) {
      return new Overrides(rank, size, localRank, Objects.requireNonNull(value, "masterAddr"), masterPort);
    }

    /**
     * These overrides with the rendezvous port set.
     *
     * @param value the port, in {@code [1, 65535]}
     * @return new overrides
     */
    public Overrides withMasterPort(int value) {
      return new Overrides(rank, size, localRank, masterAddr, value);
    }
  }

  /**
   * This process's place, from {@link System#getenv()}.
   *
   * @return where this process sits in its job
   * @throws IllegalArgumentException naming the variables and their values, if they are inconsistent (see the
   *     class comment)
   */
  public static ProcessInfo fromEnvironment() {
    return from(System.getenv(), Overrides.NONE);
  }

  /**
   * This process's place, from {@link System#getenv()}, with {@code overrides} applied.
   *
   * @param overrides the values given explicitly; {@link Overrides#NONE} for none
   * @return where this process sits in its job
   * @throws IllegalArgumentException naming the variables and their values, if they are inconsistent (see the
   *     class comment)
   */
  public static ProcessInfo fromEnvironment(Overrides overrides) {
    return from(System.getenv(), overrides);
  }

  /**
   * This process's place, from {@code env} (a map like {@link System#getenv()}).
   *
   * @param env the variables, by name
   * @return where this process sits in its job
   * @throws IllegalArgumentException naming the variables and their values, if they are inconsistent (see the
   *     class comment)
   */
  public static ProcessInfo from(Map<String, String> env) {
    return from(env, Overrides.NONE);
  }

  /** A launcher's variable names: rank, size (alternatives), local rank, local size. */
  private record Names(Launcher launcher, String rank, List<String> size, String localRank, String localSize) {}

  private static final List<Names> LAUNCHERS = List.of(
      new Names(Launcher.TORCHRUN, "RANK", List.of("WORLD_SIZE"), "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
      new Names(Launcher.OPEN_MPI, "OMPI_COMM_WORLD_RANK", List.of("OMPI_COMM_WORLD_SIZE"),
          "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
      new Names(Launcher.SLURM, "SLURM_PROCID", List.of("SLURM_NTASKS", "SLURM_NPROCS"), "SLURM_LOCALID",
          "SLURM_NTASKS_PER_NODE"));

  /** A value and where it came from ("RANK=3", "explicit rank 3"), for messages. */
  private record Valued(int value, String source) {}

  /**
   * This process's place, from {@code env} with {@code overrides} applied; see the class comment for the
   * precedence and the errors.
   *
   * @param env the variables, by name
   * @param overrides the values given explicitly; {@link Overrides#NONE} for none
   * @return where this process sits in its job
   */
  public static ProcessInfo from(Map<String, String> env, Overrides overrides) {
    Objects.requireNonNull(env, "env");
    Objects.requireNonNull(overrides, "overrides");
    Names chosen = launcherOf(env);
    Launcher launcher = chosen == null ? Launcher.NONE : chosen.launcher();
    Valued rank = chosen == null ? new Valued(0, "no launcher: rank 0") : integer(env, chosen.rank());
    Valued size = chosen == null ? new Valued(1, "no launcher: size 1") : integer(env, firstPresent(env, chosen.size()));
    Valued localRank = chosen != null && present(env, chosen.localRank()) ? integer(env, chosen.localRank()) : null;
    Valued localSize = null;
    if (chosen != null && present(env, chosen.localSize()) && chosen.launcher() != Launcher.SLURM) {
      localSize = integer(env, chosen.localSize()); // Slurm's per-node count may be "2(x3)": not used
    }
    if (overrides.rank() != null) {
      rank = new Valued(overrides.rank(), "explicit rank " + overrides.rank());
    }
    if (overrides.size() != null) {
      size = new Valued(overrides.size(), "explicit size " + overrides.size());
    }
    if (overrides.localRank() != null) {
      localRank = new Valued(overrides.localRank(), "explicit local rank " + overrides.localRank());
    }
    if (overrides.rank() != null || overrides.size() != null) {
      launcher = chosen == null || (overrides.rank() != null && overrides.size() != null) ? Launcher.EXPLICIT : launcher;
    }
    if (localRank == null) {
      localRank = new Valued(rank.value(), "the rank (no local rank set) " + rank.value());
    }
    checkRanks(rank, size, localRank, overrides.localRank() == null ? localSize : null);
    String addr = masterAddress(env, overrides, chosen, size.value());
    int port = masterPort(env, overrides);
    return new ProcessInfo(rank.value(), size.value(), localRank.value(), addr, port, launcher);
  }

  /**
   * The launcher whose rank and size are both set, the first in {@link #LAUNCHERS}' order, or null for none;
   * a launcher with only one of the two set is refused, unless one before it has both.
   */
  private static Names launcherOf(Map<String, String> env) {
    for (Names n : LAUNCHERS) {
      boolean hasRank = present(env, n.rank());
      String sizeName = firstPresent(env, n.size());
      if (hasRank && sizeName != null) {
        return n;
      }
      if (hasRank != (sizeName != null) && !anyHigherComplete(env, n)) {
        throw new IllegalArgumentException(hasRank
            ? n.rank() + "=" + env.get(n.rank()) + " is set but " + String.join(" / ", n.size())
                + " is not: set both (or neither) of the " + n.launcher() + " variables"
            : sizeName + "=" + env.get(sizeName) + " is set but " + n.rank() + " is not: set both (or neither) of the "
                + n.launcher() + " variables");
      }
    }
    return null;
  }

  /**
   * Checks that {@code size} is at least 1 and that {@code rank} and {@code localRank} are ranks of it, and
   * {@code localRank} below {@code localSize} (null: not checked, none set or the local rank given explicitly).
   */
  private static void checkRanks(Valued rank, Valued size, Valued localRank, Valued localSize) {
    if (size.value() < 1) {
      throw new IllegalArgumentException(size.source() + ": the number of ranks must be at least 1");
    }
    if (rank.value() < 0 || rank.value() >= size.value()) {
      throw new IllegalArgumentException(rank.source() + " is not a rank of " + size.source() + ": a rank must be in [0, "
          + size.value() + ")");
    }
    if (localRank.value() < 0 || localRank.value() >= size.value()) {
      throw new IllegalArgumentException(localRank.source() + " is not in [0, " + size.value() + ") (" + size.source()
          + "): a local rank is an index among this node's processes");
    }
    if (localSize != null && localRank.value() >= localSize.value()) {
      throw new IllegalArgumentException(localRank.source() + " is not below " + localSize.source()
          + ": a local rank must be in [0, local size)");
    }
  }

  /** Rank 0's address: the explicit one, else {@code MASTER_ADDR}, else what the launcher's variables say. */
  private static String masterAddress(Map<String, String> env, Overrides overrides, Names chosen, int size) {
    String addr = overrides.masterAddr();
    if (addr == null) {
      addr = blankToNull(env.get("MASTER_ADDR"));
    }
    if (addr == null) {
      addr = inferHost(env, chosen, size);
    }
    return addr;
  }

  /**
   * The rendezvous port: the explicit one, else {@link #PORT_ENV}, else {@code MASTER_PORT} (one above it where
   * torchrun's own store listens there), else {@link #DEFAULT_PORT}.
   */
  private static int masterPort(Map<String, String> env, Overrides overrides) {
    if (overrides.masterPort() != null) {
      int port = overrides.masterPort();
      checkPort(port, "explicit port " + port);
      return port;
    }
    if (present(env, PORT_ENV)) {
      Valued p = integer(env, PORT_ENV);
      checkPort(p.value(), p.source());
      return p.value();
    }
    if (present(env, "MASTER_PORT")) {
      Valued p = integer(env, "MASTER_PORT");
      checkPort(p.value(), p.source());
      // torchrun's static rendezvous keeps its own TCPStore listening on MASTER_PORT and says so here
      if ("true".equalsIgnoreCase(blankToNull(env.get("TORCHELASTIC_USE_AGENT_STORE")))) {
        checkPort(p.value() + 1, p.source() + " + 1 (TORCHELASTIC_USE_AGENT_STORE=True: torchrun's store has MASTER_PORT)");
        return p.value() + 1;
      }
      return p.value();
    }
    return DEFAULT_PORT;
  }


  private static boolean anyHigherComplete(Map<String, String> env, Names n) {
    for (Names higher : LAUNCHERS) {
      if (higher == n) {
        return false;
      }
      if (present(env, higher.rank()) && firstPresent(env, higher.size()) != null) {
        return true;
      }
    }
    return false;
  }

  private static String inferHost(Map<String, String> env, Names chosen, int size) {
    if (size == 1) {
      return "127.0.0.1";
    }
    if (chosen == null) {
      return null;
    }
    switch (chosen.launcher()) {
      case TORCHRUN, OPEN_MPI -> {
        String local = env.get(chosen.localSize());
        if (local != null && local.trim().equals(Integer.toString(size))) {
          return "127.0.0.1";
        }
      }
      case SLURM -> {
        if ("1".equals(blankToNull(env.get("SLURM_NNODES"))) || "1".equals(blankToNull(env.get("SLURM_JOB_NUM_NODES")))) {
          return "127.0.0.1";
        }
        for (String list : List.of("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")) {
          String nodes = blankToNull(env.get(list));
          if (nodes != null) {
            return firstHost(nodes);
          }
        }
      }
      default -> {}
    }
    return null;
  }

  /**
   * The first host of a Slurm node list: {@code "gpu[03-05,09],cpu1"} gives {@code gpu03}, {@code
   * "a1,a2"} gives {@code a1}.
   */
  static String firstHost(String nodeList) {
    String s = nodeList.trim();
    int depth = 0;
    int end = s.length();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '[') {
        depth++;
      } else if (c == ']') {
        depth--;
      } else if (c == ',' && depth == 0) {
        end = i;
        break;
      }
    }
    String first = s.substring(0, end);
    int open = first.indexOf('[');
    if (open < 0) {
      return first;
    }
    String range = first.substring(open + 1, first.indexOf(']', open) < 0 ? first.length() : first.indexOf(']', open));
    String lowest = range.split(",")[0].split("-")[0];
    return first.substring(0, open) + lowest;
  }

  private static void checkPort(int port, String source) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException(source + " is not a TCP port: it must be in [1, 65535]");
    }
  }

  private static boolean present(Map<String, String> env, String name) {
    return name != null && blankToNull(env.get(name)) != null;
  }

  private static String firstPresent(Map<String, String> env, List<String> names) {
    for (String n : names) {
      if (present(env, n)) {
        return n;
      }
    }
    return null;
  }

  private static String blankToNull(String s) {
    return s == null || s.isBlank() ? null : s.trim();
  }

  private static Valued integer(Map<String, String> env, String name) {
    String raw = env.get(name).trim();
    try {
      return new Valued(Integer.parseInt(raw), name + "=" + raw);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + "=" + env.get(name) + " is not an integer", e);
    }
  }
}
