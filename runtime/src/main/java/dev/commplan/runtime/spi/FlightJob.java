package dev.commplan.runtime.spi;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.function.IntFunction;

/**
 * One run's flight records (docs/flight-records.md): its job id, the same in every rank's file of the run and
 * different between runs; its backend and world size; where the records go when a rank fails (the {@code
 * CommOptions.flightRecordDir()}, or none); and the record of each of its ranks that live in this process
 * ({@link FlightLog}): every rank of an in-process cluster, or this process's one rank.
 *
 * <p><b>Job ids.</b> A cluster of this process (local, NCCL) makes its own ({@link #newId}): a run is one
 * cluster. A rank per process takes the launcher's where there is one ({@link #launcherId}: torchrun's run id,
 * Slurm's job and step, PMIx's namespace, Open MPI's job id), which every rank of the run reads alike, and the
 * backend makes it unique per run where it can (MPI: rank 0's, broadcast when the world is made; NCCL: from the
 * unique id its ranks share).
 */
public final class FlightJob {
  private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final String id;
  private final String backend;
  private final int worldSize;
  private final Path dir;
  private final Map<Integer, FlightLog> logs = new ConcurrentSkipListMap<>();

  /**
   * A run's records.
   *
   * @param id the job id, not empty
   * @param backend the backend's name: {@code local}, {@code mpi}, {@code nccl}
   * @param worldSize the world's size
   * @param dir where every rank writes its file when a rank fails, or null for nowhere
   */
  public FlightJob(String id, String backend, int worldSize, Path dir) {
    this.id = Objects.requireNonNull(id, "id");
    if (id.isEmpty()) {
      throw new IllegalArgumentException("a job id is not empty");
    }
    this.backend = Objects.requireNonNull(backend, "backend");
    this.worldSize = worldSize;
    this.dir = dir;
  }

  /**
   * A new job id, for a run that makes its own: {@code PREFIX-yyyyMMdd-HHmmss-xxxxxx}, the UTC time and six
   * random hex digits.
   *
   * @param prefix what it starts with: the backend's name, or the launcher's id
   * @return the id
   */
  public static String newId(String prefix) {
    byte[] random = new byte[3];
    RANDOM.nextBytes(random);
    return prefix + "-" + STAMP.format(ZonedDateTime.now(ZoneOffset.UTC)) + "-" + HexFormat.of().formatHex(random);
  }

  /**
   * The launcher's id of this run, from its environment, or null: {@code torchrun-ID} ({@code
   * TORCHELASTIC_RUN_ID}, unless {@code none}), {@code slurm-JOB.STEP} ({@code SLURM_JOB_ID}, {@code
   * SLURM_STEP_ID}), {@code pmix-NAMESPACE} ({@code PMIX_NAMESPACE}), {@code ompi-ID} ({@code
   * OMPI_MCA_ess_base_jobid}), the first of them set. Every rank of one run reads the same.
   *
   * @param env the environment ({@link System#getenv()})
   * @return the id, or null
   */
  public static String launcherId(Map<String, String> env) {
    String torch = env.get("TORCHELASTIC_RUN_ID");
    if (torch != null && !torch.isBlank() && !torch.strip().equals("none")) {
      return "torchrun-" + torch.strip();
    }
    String slurm = env.get("SLURM_JOB_ID");
    if (slurm != null && !slurm.isBlank()) {
      String step = env.get("SLURM_STEP_ID");
      return "slurm-" + slurm.strip() + (step == null || step.isBlank() ? "" : "." + step.strip());
    }
    String pmix = env.get("PMIX_NAMESPACE");
    if (pmix != null && !pmix.isBlank()) {
      return "pmix-" + pmix.strip();
    }
    String ompi = env.get("OMPI_MCA_ess_base_jobid");
    return ompi == null || ompi.isBlank() ? null : "ompi-" + ompi.strip();
  }

  /**
   * A job id that every rank of a run makes alike from what they share: the launcher's id where there is one,
   * else {@code prefix}, then the first 12 hex digits of the SHA-256 of {@code shared} (NCCL: the unique id rank 0
   * handed to every rank), which differs between runs.
   *
   * @param prefix the backend's name, used where no launcher's id is set
   * @param env the environment
   * @param shared bytes every rank of the run has, and no other run
   * @return the id
   */
  public static String sharedId(String prefix, Map<String, String> env, byte[] shared) {
    String launcher = launcherId(env);
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(shared);
      return (launcher != null ? launcher : prefix) + "-" + HexFormat.of().formatHex(digest, 0, 6);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /**
   * The record of world rank {@code worldRank} in this process, made on first use.
   *
   * @param worldRank a rank of the world
   * @return its record
   */
  public FlightLog log(int worldRank) {
    return logs.computeIfAbsent(worldRank, r -> new FlightLog(this, r));
  }

  /** {@return the job id} */
  public String id() {
    return id;
  }

  /** {@return the backend's name} */
  public String backend() {
    return backend;
  }

  /** {@return the world's size} */
  public int worldSize() {
    return worldSize;
  }

  /** {@return where the records go when a rank fails, or null} */
  public Path dir() {
    return dir;
  }

  /**
   * A rank failed: every rank of this job in this process writes its file to {@link #dir()} (nothing where there
   * is none), each once per job, with the reason {@code reasonOf} gives for it ({@link FlightLog#writeOnFailure}).
   *
   * @param reasonOf each world rank's reason: the failure it saw, its first line is enough
   */
  public void writeOnFailure(IntFunction<String> reasonOf) {
    if (dir == null) {
      return;
    }
    for (FlightLog log : new ArrayList<>(logs.values())) {
      log.writeOnFailure(reasonOf.apply(log.worldRank()));
    }
  }

  /** {@return the file name of world rank {@code worldRank}'s record: {@code <job>.rank-<worldRank>.json}} */
  String fileName(int worldRank) {
    return id.replaceAll("[^A-Za-z0-9._-]", "_") + ".rank-" + worldRank + ".json";
  }

  /**
   * The world ranks of the group of {@code identity}, in group-rank order, from the records of this process's
   * ranks (an in-process cluster, whose backend cannot say them itself: NCCL's splits); null where a member's
   * record does not hold it.
   */
  int[] membersOf(String identity, int size) {
    if (identity == null) {
      return null;
    }
    int[] members = new int[size];
    int found = 0;
    for (FlightLog log : logs.values()) {
      for (FlightGroup g : log.openGroups()) {
        if (identity.equals(g.identity()) && g.size() == size && g.rank() >= 0 && g.rank() < size) {
          members[g.rank()] = log.worldRank();
          found++;
        }
      }
    }
    return found == size ? members : null;
  }

  /** The ranks of this job with a record in this process, in rank order. */
  List<FlightLog> logs() {
    return List.copyOf(logs.values());
  }

  @Override
  public String toString() {
    return "FlightJob[" + id + ", " + backend + ", " + worldSize + " ranks" + (dir != null ? ", to " + dir : "") + "]";
  }
}
