package dev.commplan.runtime.nccl.rank;

import dev.commplan.runtime.nccl.sharing.GpuSharing;
import dev.commplan.runtime.spi.FlightJob;
import dev.commplan.runtime.spi.FlightLog;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One rank's family of communicators in this process: a communicator made by the backend (the world) and
 * every communicator split from it, transitively ({@code split}, a mesh's axes). They fail together, as
 * the contract says: when one member leaves OPEN other than by being closed (its own {@code abort()}, a
 * fatal code, a {@code synchronize()} timeout, an asynchronous error, the cluster's watchdog, another
 * rank's failure), every other member is aborted ({@code ncclCommAbort}, from whatever thread noticed,
 * as {@link NcclRankState#abortFromOutside} does) and from then on says, at every call and {@code
 * synchronize()}, which communicator of the family failed and why.
 *
 * <p>Only the first failure propagates: the members it aborts report to the family too, and find it
 * failed already. A member that joins after the failure (a split that was under way) is aborted at once.
 *
 * <p>NCCL itself does not do this: a communicator split with {@code splitShare} off (the default) has
 * its own abort flag, which {@code ncclCommAbort} of the parent sets only while the split is still being
 * made ({@code childAbortFlag} in NCCL's {@code init.cc}); afterwards parent and child fail separately.
 *
 * <p>The family also carries how many ranks share this rank's GPU and the CTA limit chosen for that
 * ({@link #sharing()}), which every split of the world is made with; and it gives the cluster's watchdog
 * every member to watch ({@link #members()}). Other
 * ranks learn of the failure as they learn of any: in a cluster of this process, from the task that
 * throws it ({@code RankSupervisor}); in other processes, from their timeout.
 *
 * <p>The family holds this rank's flight record ({@link #flightLog()}), of which each member is a group; when the
 * family fails, the rank writes it to the options' folder, if any ({@link FlightLog#writeOnFailure}), once. In a
 * cluster of this process the supervisor has every other rank write its own too (those whose task returned
 * included); in other processes every rank writes when its own family fails, at its timeout at the latest.
 */
public final class NcclFamily {
  /** What the family needs of a member; {@link NcclRankState} in the backend, fakes in tests. */
  public interface Member {
    /** {@code "rank 0 of axis tp of mesh [dp=2, tp=4] (device 0)"}: the group and the rank, for messages. */
    String who();

    /**
     * Aborts this member because {@code failure} (another member's) ended the family: OPEN → ABORTED
     * with {@code ncclCommAbort} only (its memory and streams are freed by its own close or abort), and
     * later uses throw naming {@code failure}. Nothing if it has left OPEN already. Any thread.
     */
    void abortWithFamily(Failure failure);
  }

  /**
   * The first failure of the family.
   *
   * @param who the member that failed ({@link Member#who()})
   * @param why what happened to it: "was aborted (ncclCommAbort) by abort()", a timeout's summary
   * @param cause the exception that stands for it, or null
   */
  public record Failure(String who, String why, Throwable cause) {
    /** {@code "rank 0 of axis tp of mesh [dp=2, tp=4] (device 0) was aborted (ncclCommAbort) by abort()"}. */
    @Override
    public String toString() {
      return who + " " + why;
    }
  }

  private final List<Member> members = new CopyOnWriteArrayList<>();
  private final Object lock = new Object();
  private volatile Failure failure; // guarded by lock for writes; set once
  private final GpuSharing sharing;
  private final FlightLog flightLog;

  /** A family of a world with one rank per GPU. */
  public NcclFamily() {
    this(GpuSharing.ONE_RANK_PER_GPU);
  }

  /** A family of a world whose GPUs are shared as {@code sharing} says, its flight record written nowhere. */
  public NcclFamily(GpuSharing sharing) {
    this(sharing, new FlightJob(FlightJob.newId("nccl"), "nccl", 1, null).log(0));
  }

  /**
   * A family of a world whose GPUs are shared as {@code sharing} says.
   *
   * @param flightLog this rank's flight record, written when the family fails (where its job has a folder)
   */
  public NcclFamily(GpuSharing sharing, FlightLog flightLog) {
    this.sharing = Objects.requireNonNull(sharing, "sharing");
    this.flightLog = Objects.requireNonNull(flightLog, "flightLog");
  }

  /** {@return this rank's flight record: each member of the family is a group of it} */
  public FlightLog flightLog() {
    return flightLog;
  }

  /** {@return how many ranks share this rank's GPU, and the CTA limit its communicators are made with} */
  public GpuSharing sharing() {
    return sharing;
  }

  /** Adds {@code member}; if the family has failed already, aborts it at once (and returns false). */
  public boolean join(Member member) {
    Objects.requireNonNull(member, "member");
    Failure f;
    synchronized (lock) {
      f = failure;
      if (f == null) {
        members.add(member);
        return true;
      }
    }
    member.abortWithFamily(f);
    return false;
  }

  /** A member was closed (by its user or with its parent): it needs no watching any more. */
  public void leave(Member member) {
    members.remove(member);
  }

  /**
   * {@code origin} left OPEN because of {@code why}: if it is the family's first failure, aborts every
   * other member. Returns the family's first failure (this one or an earlier one).
   */
  public Failure failed(Member origin, String why, Throwable cause) {
    Failure first;
    synchronized (lock) {
      if (failure != null) {
        return failure;
      }
      first = new Failure(origin.who(), why, cause);
      failure = first;
    }
    for (Member m : members) {
      if (m != origin) {
        m.abortWithFamily(first);
      }
    }
    flightLog.writeOnFailure(first.toString()); // once; nothing where the options name no folder
    return first;
  }

  /** {@return the family's first failure, or null while none has failed} */
  public Failure failure() {
    return failure;
  }

  /** {@return the members now, for the cluster's watchdog and for requests to give up} */
  public List<Member> members() {
    return members;
  }
}
