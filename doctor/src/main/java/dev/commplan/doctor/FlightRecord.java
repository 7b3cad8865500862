package dev.commplan.doctor;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * One rank's flight-record file, as read (docs/flight-records.md is the format's reference; the names here
 * are its names). Validated when read ({@link RecordParser}), so the analysis can trust every invariant the
 * format states.
 *
 * @param file where it was read from, for messages
 * @param job the run's id, the same in every rank's file of one run
 * @param backend the backend's name: {@code local}, {@code mpi}, {@code nccl}, or another provider's
 * @param worldRank the rank of the process (or thread) that wrote it, in the world
 * @param worldSize the number of ranks in the world
 * @param host the host it ran on
 * @param pid its process id
 * @param reason why it was written: the failure's message, or {@code on demand}
 * @param writtenAtEpochMillis the wall clock when it was written, for people
 * @param writtenAtNanos {@code System.nanoTime()} when it was written: "now" for this rank's own nanos
 * @param groups every group (communicator) this rank belongs to, the world first
 */
record FlightRecord(Path file, String job, String backend, int worldRank, int worldSize, String host, long pid,
    String reason, long writtenAtEpochMillis, long writtenAtNanos, List<Group> groups) {

  /** The format's name, the value of {@code "format"}. */
  static final String FORMAT = "commplan-flight-record";
  /** The version this doctor reads. */
  static final int VERSION = 1;

  /**
   * This rank's record of one group.
   *
   * @param label what the runtime calls the group: {@code world}, {@code axis tp of mesh [dp=2, tp=2]}
   * @param worldRanks the group's members, in group-rank order, as world ranks
   * @param rank this rank's place in the group: {@code worldRanks.get(rank)} is the file's world rank
   * @param nextSeq the sequence number this rank's next group operation would take: how many it issued
   * @param operations the operations kept, oldest first
   */
  record Group(String label, List<Integer> worldRanks, int rank, long nextSeq, List<Operation> operations) {
    GroupKey key() {
      return new GroupKey(label, worldRanks);
    }
  }

  /**
   * What identifies a group across files: its label and its members. Two groups with one label (the tp
   * axes of a 2x2 mesh) differ in their members.
   *
   * @param label the group's label
   * @param worldRanks its members, as world ranks, in group-rank order
   */
  record GroupKey(String label, List<Integer> worldRanks) {}

  /** What an operation is, for alignment: which ones every member of the group issues in the same order. */
  enum Kind {
    /** An operation of the whole group (a plan's step or bucket, a direct collective, a split): aligned. */
    COLLECTIVE,
    /** One of the agreement check's own calls: aligned, but not counted for lateness. */
    CHECK,
    /** Sends and receives only: this rank and its peers, not the group; not aligned. */
    P2P,
    /** Work of this rank alone on a stream (a host task, a wait for an event): not aligned. */
    LOCAL;

    /** {@return the name in the file} */
    String jsonName() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** {@return whether it has a sequence number shared by every member} */
    boolean aligned() {
      return this == COLLECTIVE || this == CHECK;
    }
  }

  /** Where an operation was when the record was written. */
  enum State {
    /** Enqueued, not known to have started. */
    ENQUEUED,
    /** Started, not finished: waiting for peers or moving data. */
    STARTED,
    /** Finished. */
    COMPLETED,
    /** Failed, timed out, or abandoned because the group was aborted. */
    FAILED;

    /** {@return the name in the file} */
    String jsonName() {
      return name().toLowerCase(Locale.ROOT);
    }

    /** {@return whether the operation had not ended} */
    boolean unfinished() {
      return this == ENQUEUED || this == STARTED;
    }
  }

  /**
   * One operation.
   *
   * @param seq its number in the group's sequence on this rank (kinds {@code collective}, {@code check}), or
   *     -1 (kinds {@code p2p}, {@code local})
   * @param kind what it is, for alignment
   * @param plan the plan's name, or null outside a plan
   * @param step the plan's step, or -1
   * @param bucket the bucket of a bucketed plan's round, or -1
   * @param calls the calls it issued together (one for a direct call; an NCCL step may join several)
   * @param text the runtime's own words for it
   * @param stream the stream it was enqueued on
   * @param state where it was
   * @param enqueuedNanos this rank's {@code System.nanoTime()} when enqueued
   * @param startedNanos when it started, or null if not known
   * @param endedNanos when it ended, or null if not known
   * @param waitedNanos how long this rank waited inside it for its peers, or null if not known
   */
  record Operation(long seq, Kind kind, String plan, int step, int bucket, List<Call> calls,
      String text, String stream, State state, long enqueuedNanos, Long startedNanos, Long endedNanos,
      Long waitedNanos) {
    /** {@return the plan's fields its calls cover, in call order} */
    List<String> fields() {
      return calls.stream().flatMap(c -> c.fields().stream()).toList();
    }
  }

  /**
   * One call of an operation.
   *
   * @param collective the collective's name: {@code all-reduce}, {@code send}, {@code split}
   * @param type the data type ({@code F32}), or null
   * @param op the reduction ({@code SUM}), or null
   * @param count the element count, or null
   * @param root the root, a rank of the group, or null
   * @param peer the peer of a send or receive, a rank of the group, or null
   * @param over the mesh axis the call runs over when that is not the operation's group, or null
   * @param fields the plan's fields the call covers; empty outside a plan
   */
  record Call(String collective, String type, String op, Long count, Integer root, Integer peer, String over,
      List<String> fields) {}
}
