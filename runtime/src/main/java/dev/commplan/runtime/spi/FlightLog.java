package dev.commplan.runtime.spi;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One rank's flight record: every group (communicator) this rank of the world belongs to, the world first,
 * then each split or mesh axis in the order they were made ({@link FlightGroup}), written as one JSON file in
 * docs/flight-records.md's format, version 1 ({@link #write}), on demand ({@code Communicator.dumpFlightRecord})
 * or, once, when a rank of its job fails ({@link #writeOnFailure}). A file is never partial: it is written as
 * {@code NAME.json.tmp} beside its place and renamed there.
 */
public final class FlightLog {
  private static final System.Logger LOG = System.getLogger("dev.commplan.runtime.flightrecords");

  private final FlightJob job;
  private final int worldRank;
  private final List<FlightGroup> groups = new CopyOnWriteArrayList<>();
  private final AtomicBoolean writtenOnFailure = new AtomicBoolean();

  FlightLog(FlightJob job, int worldRank) {
    this.job = job;
    this.worldRank = worldRank;
  }

  /**
   * A communicator of this rank just made (the world first, then each split, in the order they are made): its
   * part of the record, until {@link FlightGroup#close()}.
   *
   * @param label what messages call its group: {@code world}, {@code axis tp of mesh [dp=2, tp=2]}
   * @param rank this rank's place in the group
   * @param size the group's size
   * @param worldRanks the members' world ranks in group-rank order, or null where the backend cannot say them
   *     (then {@code identity} names the group to the records of this process's other ranks, which can)
   * @param identity what every member's communicator of this group is called in this process, the same on each
   *     (NCCL's split lineage), or null
   * @return the group
   */
  public FlightGroup group(String label, int rank, int size, int[] worldRanks, String identity) {
    FlightGroup g = new FlightGroup(this, Objects.requireNonNull(label, "label"), rank, size, worldRanks, identity);
    groups.add(g);
    return g;
  }

  void forget(FlightGroup group) {
    groups.remove(group);
  }

  List<FlightGroup> openGroups() {
    return List.copyOf(groups);
  }

  /** {@return the rank this record is of, in the world} */
  public int worldRank() {
    return worldRank;
  }

  /** {@return the run this record belongs to} */
  public FlightJob job() {
    return job;
  }

  /**
   * Writes this rank's record to {@code file}, atomically ({@code FILE.tmp}, then a rename), making its folder if
   * needed.
   *
   * @param file where it goes
   * @param reason why it is written: {@code on demand}, or the failure's message (its first line is written)
   * @throws UncheckedIOException if it cannot be written
   */
  public void write(Path file, String reason) {
    String text = FlightRecordJson.render(this, firstLine(reason), System.currentTimeMillis(), System.nanoTime());
    Path target = file.toAbsolutePath();
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
    try {
      if (target.getParent() != null) {
        Files.createDirectories(target.getParent());
      }
      Files.writeString(tmp, text, StandardCharsets.UTF_8);
      try {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write rank " + worldRank + "'s flight record to " + target + ": " + e, e);
    }
  }

  /**
   * A rank of this job failed: writes this rank's record into the job's folder as {@code <job>.rank-<worldRank>.json},
   * once (a later failure writes nothing more), unless the job has no folder. Its operations that had not ended are
   * failed first: the family failed, so they never will. Never throws: a record that cannot be
   * written is reported on the logger {@code dev.commplan.runtime.flightrecords}, and the failure goes on.
   *
   * @param reason the failure this rank saw; its first line is written
   * @return the file written, or null
   */
  public Path writeOnFailure(String reason) {
    Path dir = job.dir();
    if (dir == null || !writtenOnFailure.compareAndSet(false, true)) {
      return null;
    }
    Path file = dir.resolve(job.fileName(worldRank));
    long now = System.nanoTime();
    for (FlightGroup g : groups) {
      g.failPending(now); // what had not ended never will: the family failed
    }
    try {
      write(file, reason);
      LOG.log(System.Logger.Level.INFO, "commplan: rank {0} wrote its flight record to {1}", worldRank, file);
      return file;
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "commplan: rank " + worldRank + " could not write its flight record: "
          + e.getMessage());
      return null;
    }
  }

  /** Whether this rank's record was written on failure already. */
  boolean writtenOnFailure() {
    return writtenOnFailure.get();
  }

  private static String firstLine(String reason) {
    if (reason == null || reason.isBlank()) {
      return "unknown";
    }
    int nl = reason.indexOf('\n');
    return nl < 0 ? reason : reason.substring(0, nl);
  }

  @Override
  public String toString() {
    return "FlightLog[" + job.id() + ", rank " + worldRank + ", " + groups.size() + " groups]";
  }
}
