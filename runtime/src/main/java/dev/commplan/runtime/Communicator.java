package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import java.nio.file.Path;
import java.util.List;

/**
 * One rank's view of a group of ranks that run collectives together (an {@code ncclComm_t} on the NCCL
 * backend, a thread of one JVM on the local backend, an {@code MPI_Comm} of one process on the MPI
 * backend).
 *
 * <p>Collectives are enqueued on a {@link Stream} and return without waiting. A communicator is used by
 * one thread at a time (its rank's).
 */
public interface Communicator extends AutoCloseable {
  /** {@return this rank, in {@code [0, size())}} */
  int rank();

  /** {@return the number of ranks} */
  int size();

  /** {@return this communicator's stream; collectives enqueued on it run in order} */
  Stream stream();

  /**
   * Makes another stream of this communicator (NCCL: a non-blocking CUDA stream on its device; local and
   * MPI: another ordered queue of this rank), for work that should run beside the work on {@link
   * #stream()}: collectives and plans may be enqueued on it like on the own stream, and the two are ordered
   * only through events ({@link Stream#record()}, {@link Stream#waitFor}). Collectives of one communicator
   * meet their peers in the order the host enqueued them, whichever streams they are on, so every rank
   * must enqueue them in the same order. The caller closes the stream ({@link Stream#close()}); closing
   * the communicator closes it at the latest.
   *
   * @return the new stream
   * @throws IllegalStateException if the communicator is closed
   */
  Stream newStream();

  /** {@return the backend this communicator belongs to: {@code "local"}, {@code "nccl"} or {@code "mpi"}} */
  String backendName();

  /**
   * Enqueues one {@code ncclAllReduce}; {@code send == recv} means in place.
   *
   * @param send this rank's contribution
   * @param recv where the reduction of every rank's {@code send} lands; same data type and length as
   *     {@code send}
   * @param op how elements are combined
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void allReduce(Buffer send, Buffer recv, ReduceOp op, Stream stream);

  /**
   * Enqueues one {@code ncclBroadcast} from {@code root}; {@code send == recv} means in place.
   *
   * @param send the data to broadcast; read on {@code root} only
   * @param recv where every rank receives {@code root}'s data; same data type and length as {@code send}
   * @param root the rank whose {@code send} is broadcast, in {@code [0, size())}
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void broadcast(Buffer send, Buffer recv, int root, Stream stream);

  /**
   * Enqueues one {@code ncclAllGather}: {@code recv.length() == size() * send.length()}.
   *
   * @param send this rank's slice
   * @param recv every rank's slice in rank order
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void allGather(Buffer send, Buffer recv, Stream stream);

  /**
   * Enqueues one {@code ncclReduceScatter}: {@code send.length() == size() * recv.length()}.
   *
   * @param send one slice per rank, in rank order
   * @param recv this rank's slice of the reduction
   * @param op how elements are combined
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void reduceScatter(Buffer send, Buffer recv, ReduceOp op, Stream stream);

  /**
   * Enqueues one {@code ncclReduce}: the reduction of every rank's {@code send} lands in {@code recv} on
   * {@code root} only; the other ranks' {@code recv} is left untouched. {@code recv.length() ==
   * send.length()}; {@code send == recv} means in place.
   *
   * @param send this rank's contribution
   * @param recv where the reduction lands on {@code root}
   * @param op how elements are combined
   * @param root the rank that receives the reduction, in {@code [0, size())}
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void reduce(Buffer send, Buffer recv, ReduceOp op, int root, Stream stream);

  /**
   * Enqueues one {@code ncclGather}: {@code root}'s {@code recv} gets every rank's {@code send}, rank i's
   * at slice i; the other ranks' {@code recv} is left untouched. {@code recv.length() == size() *
   * send.length()}; in place, {@code send} is the rank-th slice of {@code recv}.
   *
   * @param send this rank's slice
   * @param recv on {@code root}, every rank's slice in rank order
   * @param root the rank that receives, in {@code [0, size())}
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void gather(Buffer send, Buffer recv, int root, Stream stream);

  /**
   * Enqueues one {@code ncclScatter}: {@code root}'s {@code send} holds one slice per rank, and rank i
   * receives slice i in {@code recv}. {@code send.length() == size() * recv.length()}; in place, {@code
   * recv} is the rank-th slice of {@code send}.
   *
   * @param send on {@code root}, one slice per rank in rank order
   * @param recv this rank's slice
   * @param root the rank that sends, in {@code [0, size())}
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void scatter(Buffer send, Buffer recv, int root, Stream stream);

  /**
   * Enqueues one {@code ncclAlltoAll}: slice j of {@code send} goes to rank j, and slice i of {@code recv}
   * comes from rank i. Both have the same length, divisible by {@code size()}; out of place only.
   *
   * @param send one slice per destination rank, in rank order
   * @param recv one slice per source rank, in rank order; not {@code send}
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void allToAll(Buffer send, Buffer recv, Stream stream);

  /**
   * Enqueues one {@code ncclSend} of the whole {@code buffer} to rank {@code peer}, which must receive it
   * with {@link #recv} (same data type and length). As on NCCL, a send and the receive it waits for must
   * be in one group ({@link #groupStart()}) when both ranks also wait on each other the other way, as in a
   * ring exchange; otherwise the two ranks can wait for each other forever (here: until the timeout).
   *
   * @param buffer the data to send, whole
   * @param peer the receiving rank, in {@code [0, size())}; this rank itself only inside a group ({@link
   *     #groupStart()}) that also holds the matching {@link #recv} (outside one it is refused, {@code
   *     [CommPlan/BadPeer]}: NCCL would wait for the receive forever)
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void send(Buffer buffer, int peer, Stream stream);

  /**
   * Enqueues one {@code ncclRecv} into the whole {@code buffer} from rank {@code peer} (see {@link #send}).
   *
   * @param buffer where the data lands, whole
   * @param peer the sending rank, in {@code [0, size())}; this rank itself only inside a group that also
   *     holds the matching {@link #send}
   * @param stream the stream to enqueue on; the call returns before the data moves
   */
  void recv(Buffer buffer, int peer, Stream stream);

  /**
   * Splits this communicator into groups ({@code ncclCommSplit}, {@code MPI_Comm_split}): every rank of
   * this communicator calls it (it is collective, and blocks until every rank has); the ranks that pass
   * the same {@code color} form one new communicator, ranked by {@code key}, ties broken by their rank
   * here. The new communicator has its own {@link #stream()}; its user closes it, and closing this
   * communicator closes it at the latest. A parent and its splits are one family: when any of them
   * aborts, times out or loses a rank, every communicator of the family on every rank ends with an
   * exception that names the group and the rank.
   *
   * @param color the group this rank joins, {@code >= 0}
   * @param key this rank's order in its group (ties: the rank here)
   * @return this rank's communicator of its group
   * @throws IllegalArgumentException if {@code color < 0}
   */
  Communicator split(int color, int key);

  /**
   * {@link #split(int, int)}, with a name for the new group that its messages use (timeouts, aborts,
   * {@code toString()}); {@link Mesh} names its groups {@code axis tp of mesh [dp=2, tp=4]}.
   *
   * @param color the group this rank joins, {@code >= 0}
   * @param key this rank's order in its group (ties: the rank here)
   * @param label what messages call the new group
   * @return this rank's communicator of its group
   * @throws IllegalArgumentException if {@code color < 0}
   */
  Communicator split(int color, int key, String label);

  /**
   * {@return what messages call this communicator's group: {@code world} for one made by a backend, the
   * label given to {@link #split(int, int, String)} for a split one}
   */
  String groupLabel();

  /** Opens a group ({@code ncclGroupStart}): collectives until {@link #groupEnd()} are issued together. */
  void groupStart();

  /** Closes the group opened by {@link #groupStart()} ({@code ncclGroupEnd}). */
  void groupEnd();

  /**
   * Writes this rank's flight record to {@code file} now: every group (communicator) this rank belongs to, the
   * world first, each with its last operations (plan, step or bucket, fields, calls, state, times, and how long
   * this rank waited for its peers where the backend can tell), in the JSON format of docs/flight-records.md,
   * which the doctor reads ({@code java -jar commplan-doctor.jar DIR}, docs/doctor.md). For a run that is slow
   * but not failing: call it on every rank, into one folder. The file is written whole or not at all ({@code
   * FILE.tmp}, then a rename); its folder is made if needed. Any thread may call it; it enqueues nothing. Where
   * the run should write them by itself when a rank fails, see {@link CommOptions#withFlightRecordDir}.
   *
   * @param file where the record goes; the doctor reads every {@code *.json} file of a folder
   * @throws java.io.UncheckedIOException if it cannot be written
   */
  void dumpFlightRecord(Path file);

  /**
   * Which ranks this communicator waits for, estimated while the job runs (docs/reliability.md, "Lateness
   * online"): each rank's {@link Lateness}, slowest first (by median, then worst, then rank); the first is the
   * rank the others wait for most. The same list on every rank. The figures come with the agreement check's
   * comparisons, which carry each rank's waits since the last (two longs a rank, nothing per call), so they cover
   * the calls up to the last comparison a {@code synchronize()} has read; they are empty while none has, and
   * where the agreement check is off ({@link CommOptions#agreementCheck()}) or the backend cannot time waits.
   *
   * @return every rank's lateness, slowest first, or an empty list
   */
  List<Lateness> lateness();

  /** {@return whether {@link #close()} has been called} */
  boolean isClosed();

  /** Releases this rank's communicator; idempotent. Buffers allocated through it must not be used after. */
  @Override
  void close();
}
