package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;

/**
 * One rank's view of a group of ranks that run collectives together (an {@code ncclComm_t} on the NCCL
 * backend, a thread of one JVM on the local backend, an {@code MPI_Comm} of one process on the MPI
 * backend).
 *
 * <p>Collectives are enqueued on a {@link Stream} and return without waiting. A communicator is used by
 * one thread at a time (its rank's).
 */
public interface Communicator extends AutoCloseable {
  /** This rank, in {@code [0, size())}. */
  int rank();

  /** The number of ranks. */
  int size();

  /** This communicator's stream; collectives enqueued on it run in order. */
  Stream stream();

  /** The backend this communicator belongs to: {@code "local"}, {@code "nccl"} or {@code "mpi"}. */
  String backendName();

  /** Enqueues one {@code ncclAllReduce}; {@code send == recv} means in place. */
  void allReduce(Buffer send, Buffer recv, ReduceOp op, Stream stream);

  /** Enqueues one {@code ncclBroadcast} from {@code root}; {@code send == recv} means in place. */
  void broadcast(Buffer send, Buffer recv, int root, Stream stream);

  /** Enqueues one {@code ncclAllGather}: {@code recv.length() == size() * send.length()}. */
  void allGather(Buffer send, Buffer recv, Stream stream);

  /** Enqueues one {@code ncclReduceScatter}: {@code send.length() == size() * recv.length()}. */
  void reduceScatter(Buffer send, Buffer recv, ReduceOp op, Stream stream);

  /** Opens a group ({@code ncclGroupStart}): collectives until {@link #groupEnd()} are issued together. */
  void groupStart();

  /** Closes the group opened by {@link #groupStart()} ({@code ncclGroupEnd}). */
  void groupEnd();

  /** Whether {@link #close()} has been called. */
  boolean isClosed();

  /** Releases this rank's communicator; idempotent. Buffers allocated through it must not be used after. */
  @Override
  void close();
}
