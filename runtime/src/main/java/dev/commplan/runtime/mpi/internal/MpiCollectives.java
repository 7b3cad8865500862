package dev.commplan.runtime.mpi.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * The non-blocking collectives and point-to-point calls of Open MPI's {@code mpi.h} that CommPlan issues,
 * bound as {@link Mpi} binds the rest (one holder class per function, linked on first use, {@code
 * invokeExact}; pointers and handles as {@code long}, counts, roots, ranks and tags as {@code int}). Each
 * returns the MPI error code. Their symbols are among {@link Mpi}'s required ones.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class MpiCollectives {
  private MpiCollectives() {}

  private static MethodHandle handle(String name, FunctionDescriptor descriptor) {
    return Mpi.handle(name, descriptor);
  }

  private static Error unreachable(Throwable t) {
    return Mpi.unreachable(t);
  }

  private static final class MPI_Iallreduce {
    static final MethodHandle H = handle("MPI_Iallreduce", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Iallreduce(long sendbuf, long recvbuf, int count, long datatype, long op, long comm, long request) {
    try {
      return (int) MPI_Iallreduce.H.invokeExact(sendbuf, recvbuf, count, datatype, op, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Iallgather {
    static final MethodHandle H = handle("MPI_Iallgather", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Iallgather(long sendbuf, int sendcount, long sendtype, long recvbuf, int recvcount, long recvtype, long comm, long request) {
    try {
      return (int) MPI_Iallgather.H.invokeExact(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Ireduce_scatter_block {
    static final MethodHandle H = handle("MPI_Ireduce_scatter_block", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Ireduce_scatter_block(long sendbuf, long recvbuf, int recvcount, long datatype, long op, long comm, long request) {
    try {
      return (int) MPI_Ireduce_scatter_block.H.invokeExact(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Ibcast {
    static final MethodHandle H = handle("MPI_Ibcast", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Ibcast(long buffer, int count, long datatype, int root, long comm, long request) {
    try {
      return (int) MPI_Ibcast.H.invokeExact(buffer, count, datatype, root, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Ireduce {
    static final MethodHandle H = handle("MPI_Ireduce", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Ireduce(long sendbuf, long recvbuf, int count, long datatype, long op, int root, long comm, long request) {
    try {
      return (int) MPI_Ireduce.H.invokeExact(sendbuf, recvbuf, count, datatype, op, root, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Igather {
    static final MethodHandle H = handle("MPI_Igather", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Igather(long sendbuf, int sendcount, long sendtype, long recvbuf, int recvcount, long recvtype, int root, long comm, long request) {
    try {
      return (int) MPI_Igather.H.invokeExact(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Iscatter {
    static final MethodHandle H = handle("MPI_Iscatter", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Iscatter(long sendbuf, int sendcount, long sendtype, long recvbuf, int recvcount, long recvtype, int root, long comm, long request) {
    try {
      return (int) MPI_Iscatter.H.invokeExact(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Ialltoall {
    static final MethodHandle H = handle("MPI_Ialltoall", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Ialltoall(long sendbuf, int sendcount, long sendtype, long recvbuf, int recvcount, long recvtype, long comm, long request) {
    try {
      return (int) MPI_Ialltoall.H.invokeExact(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Isend {
    static final MethodHandle H = handle("MPI_Isend", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Isend(long buf, int count, long datatype, int dest, int tag, long comm, long request) {
    try {
      return (int) MPI_Isend.H.invokeExact(buf, count, datatype, dest, tag, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Irecv {
    static final MethodHandle H = handle("MPI_Irecv", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Irecv(long buf, int count, long datatype, int source, int tag, long comm, long request) {
    try {
      return (int) MPI_Irecv.H.invokeExact(buf, count, datatype, source, tag, comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }
}
