package dev.commplan.runtime.mpi.internal;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * The functions of Open MPI's {@code mpi.h} that CommPlan calls, one Java method per C function, each a
 * {@code static final MethodHandle} in its own holder class (linked on first use) called with {@code
 * invokeExact}. No checking here: each returns the MPI error code; the backend turns codes into {@code
 * MpiException}s.
 *
 * <p>Types, from Open MPI 4.1's {@code mpi.h}: {@code MPI_Comm}, {@code MPI_Datatype}, {@code MPI_Op},
 * {@code MPI_Errhandler} and {@code MPI_Request} are pointers to structs; the predefined ones ({@code
 * MPI_COMM_WORLD}, {@code MPI_FLOAT}, {@code MPI_SUM}, ...) are the addresses of global objects of the
 * library ({@code ompi_mpi_comm_world}, {@code ompi_mpi_float}, {@code ompi_mpi_op_sum}), read once in
 * {@link Handles}. Every pointer, in or out, is passed as a {@code long} (the same register on the 64-bit
 * Linux ABIs), so that a call builds no segment; counts are C {@code int}s.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class Mpi {
  private Mpi() {}

  /** {@code MPI_SUCCESS}. */
  public static final int SUCCESS = 0;
  /** {@code MPI_THREAD_SINGLE}: the enum of mpi.h, 0..3. */
  public static final int THREAD_SINGLE = 0;
  /** {@code MPI_THREAD_FUNNELED}. */
  public static final int THREAD_FUNNELED = 1;
  /** {@code MPI_THREAD_SERIALIZED}. */
  public static final int THREAD_SERIALIZED = 2;
  /** {@code MPI_THREAD_MULTIPLE}. */
  public static final int THREAD_MULTIPLE = 3;
  /** {@code #define MPI_IN_PLACE ((void *) 1)}. */
  public static final long IN_PLACE = 1L;
  /** {@code MPI_STATUSES_IGNORE}: {@code ((MPI_Status *) 0)}. */
  public static final long STATUSES_IGNORE = 0L;
  /** {@code MPI_ERR_TRUNCATE}: a message longer than the receive that matched it. */
  public static final int ERR_TRUNCATE = 15;
  /** {@code MPI_ERR_IN_STATUS}: the error of each request is in its status's {@code MPI_ERROR}. */
  public static final int ERR_IN_STATUS = 18;
  /** {@code MPI_ERR_PENDING}: in a status, the request has not completed. */
  public static final int ERR_PENDING = 19;
  /** {@code MPI_ANY_SOURCE}. */
  public static final int ANY_SOURCE = -1;
  /** {@code MPI_UNDEFINED}: a split's color for "in no group"; a count {@code MPI_Get_count} cannot give. */
  public static final int UNDEFINED = -32766;
  /**
   * The size of Open MPI 4.1's {@code MPI_Status}: {@code int MPI_SOURCE, MPI_TAG, MPI_ERROR, _cancelled;
   * size_t _ucount}.
   */
  public static final int STATUS_BYTES = 24;
  /** Where {@code MPI_SOURCE} is in an {@code MPI_Status}. */
  public static final int STATUS_SOURCE = 0;
  /** Where {@code MPI_ERROR} is in an {@code MPI_Status}. */
  public static final int STATUS_ERROR = 8;
  /** {@code MPI_MAX_ERROR_STRING} (OPAL_MAX_ERROR_STRING, 256) and {@code MPI_MAX_LIBRARY_VERSION_STRING} (256). */
  public static final int MAX_STRING = 256;

  /** The functions and objects that must be present for the library to count as Open MPI. */
  static final List<String> REQUIRED_SYMBOLS = List.of("MPI_Init_thread", "MPI_Initialized", "MPI_Finalized", "MPI_Finalize", "MPI_Query_thread", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Comm_dup", "MPI_Comm_free", "MPI_Comm_set_errhandler", "MPI_Abort", "MPI_Barrier", "MPI_Iallreduce", "MPI_Iallgather", "MPI_Ireduce_scatter_block", "MPI_Ibcast",
      "MPI_Ireduce", "MPI_Igather", "MPI_Iscatter", "MPI_Ialltoall", "MPI_Isend", "MPI_Irecv", "MPI_Testall", "MPI_Waitall", "MPI_Test", "MPI_Get_count", "MPI_Ibarrier", "MPI_Request_free", "MPI_Cancel", "MPI_Comm_split", "MPI_Error_string", "MPI_Get_library_version", "MPI_Op_create",
      "ompi_mpi_comm_world", "ompi_mpi_float", "ompi_mpi_op_sum", "ompi_mpi_errors_return");

  static MethodHandle handle(String name, FunctionDescriptor descriptor) {
    return MpiLibrary.get().downcall(name, descriptor);
  }

  static Error unreachable(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new AssertionError("a native downcall threw a checked exception", t);
  }

  /** The predefined handles: addresses of Open MPI's global objects, read when first used. */
  public static final class Handles {
    private Handles() {}

    private static long of(String symbol) {
      return MpiLibrary.get().symbol(symbol);
    }

    /** {@code MPI_COMM_WORLD}. */
    public static final long COMM_WORLD = of("ompi_mpi_comm_world");
    /** {@code MPI_ERRORS_RETURN}. */
    public static final long ERRORS_RETURN = of("ompi_mpi_errors_return");
    /** {@code MPI_FLOAT}. */
    public static final long FLOAT = of("ompi_mpi_float");
    /** {@code MPI_DOUBLE}. */
    public static final long DOUBLE = of("ompi_mpi_double");
    /** {@code MPI_INT8_T}. */
    public static final long INT8 = of("ompi_mpi_int8_t");
    /** {@code MPI_UINT8_T}. */
    public static final long UINT8 = of("ompi_mpi_uint8_t");
    /** {@code MPI_UINT16_T}: how F16 and BF16 travel (reduced by CommPlan's own ops). */
    public static final long UINT16 = of("ompi_mpi_uint16_t");
    /** {@code MPI_INT32_T}. */
    public static final long INT32 = of("ompi_mpi_int32_t");
    /** {@code MPI_UINT32_T}. */
    public static final long UINT32 = of("ompi_mpi_uint32_t");
    /** {@code MPI_INT64_T}. */
    public static final long INT64 = of("ompi_mpi_int64_t");
    /** {@code MPI_UINT64_T}. */
    public static final long UINT64 = of("ompi_mpi_uint64_t");
    /** {@code MPI_SUM}. */
    public static final long OP_SUM = of("ompi_mpi_op_sum");
    /** {@code MPI_PROD}. */
    public static final long OP_PROD = of("ompi_mpi_op_prod");
    /** {@code MPI_MIN}. */
    public static final long OP_MIN = of("ompi_mpi_op_min");
    /** {@code MPI_MAX}. */
    public static final long OP_MAX = of("ompi_mpi_op_max");
  }

  private static final class MPI_Init_thread {
    static final MethodHandle H = handle("MPI_Init_thread", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)} */
  public static int MPI_Init_thread(long argc, long argv, int required, long provided) {
    try {
      return (int) MPI_Init_thread.H.invokeExact(argc, argv, required, provided);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Initialized {
    static final MethodHandle H = handle("MPI_Initialized", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Initialized(int *flag)} */
  public static int MPI_Initialized(long flag) {
    try {
      return (int) MPI_Initialized.H.invokeExact(flag);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Finalized {
    static final MethodHandle H = handle("MPI_Finalized", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Finalized(int *flag)} */
  public static int MPI_Finalized(long flag) {
    try {
      return (int) MPI_Finalized.H.invokeExact(flag);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Finalize {
    static final MethodHandle H = handle("MPI_Finalize", FunctionDescriptor.of(JAVA_INT));
  }

  /** {@code int MPI_Finalize(void)} */
  public static int MPI_Finalize() {
    try {
      return (int) MPI_Finalize.H.invokeExact();
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Query_thread {
    static final MethodHandle H = handle("MPI_Query_thread", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Query_thread(int *provided)} */
  public static int MPI_Query_thread(long provided) {
    try {
      return (int) MPI_Query_thread.H.invokeExact(provided);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Comm_rank {
    static final MethodHandle H = handle("MPI_Comm_rank", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Comm_rank(MPI_Comm comm, int *rank)} */
  public static int MPI_Comm_rank(long comm, long rank) {
    try {
      return (int) MPI_Comm_rank.H.invokeExact(comm, rank);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Comm_size {
    static final MethodHandle H = handle("MPI_Comm_size", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Comm_size(MPI_Comm comm, int *size)} */
  public static int MPI_Comm_size(long comm, long size) {
    try {
      return (int) MPI_Comm_size.H.invokeExact(comm, size);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Comm_dup {
    static final MethodHandle H = handle("MPI_Comm_dup", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)} */
  public static int MPI_Comm_dup(long comm, long newcomm) {
    try {
      return (int) MPI_Comm_dup.H.invokeExact(comm, newcomm);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Comm_free {
    static final MethodHandle H = handle("MPI_Comm_free", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Comm_free(MPI_Comm *comm)} */
  public static int MPI_Comm_free(long comm) {
    try {
      return (int) MPI_Comm_free.H.invokeExact(comm);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Comm_set_errhandler {
    static final MethodHandle H = handle("MPI_Comm_set_errhandler", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)} */
  public static int MPI_Comm_set_errhandler(long comm, long errhandler) {
    try {
      return (int) MPI_Comm_set_errhandler.H.invokeExact(comm, errhandler);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Abort {
    static final MethodHandle H = handle("MPI_Abort", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT));
  }

  /** {@code int MPI_Abort(MPI_Comm comm, int errorcode)} */
  public static int MPI_Abort(long comm, int errorcode) {
    try {
      return (int) MPI_Abort.H.invokeExact(comm, errorcode);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Barrier {
    static final MethodHandle H = handle("MPI_Barrier", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Barrier(MPI_Comm comm)} */
  public static int MPI_Barrier(long comm) {
    try {
      return (int) MPI_Barrier.H.invokeExact(comm);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Testall {
    static final MethodHandle H = handle("MPI_Testall", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])} */
  public static int MPI_Testall(int count, long requests, long flag, long statuses) {
    try {
      return (int) MPI_Testall.H.invokeExact(count, requests, flag, statuses);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Waitall {
    static final MethodHandle H = handle("MPI_Waitall", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)} */
  public static int MPI_Waitall(int count, long requests, long statuses) {
    try {
      return (int) MPI_Waitall.H.invokeExact(count, requests, statuses);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Error_string {
    static final MethodHandle H = handle("MPI_Error_string", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Error_string(int errorcode, char *string, int *resultlen)} */
  public static int MPI_Error_string(int errorcode, long string, long resultlen) {
    try {
      return (int) MPI_Error_string.H.invokeExact(errorcode, string, resultlen);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Get_library_version {
    static final MethodHandle H = handle("MPI_Get_library_version", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Get_library_version(char *version, int *resultlen)} */
  public static int MPI_Get_library_version(long version, long resultlen) {
    try {
      return (int) MPI_Get_library_version.H.invokeExact(version, resultlen);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Op_create {
    static final MethodHandle H = handle("MPI_Op_create", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Op_create(MPI_User_function *function, int commute, MPI_Op *op)} */
  public static int MPI_Op_create(long function, int commute, long op) {
    try {
      return (int) MPI_Op_create.H.invokeExact(function, commute, op);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Test {
    static final MethodHandle H = handle("MPI_Test", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)} */
  public static int MPI_Test(long request, long flag, long status) {
    try {
      return (int) MPI_Test.H.invokeExact(request, flag, status);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Get_count {
    static final MethodHandle H = handle("MPI_Get_count", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)} */
  public static int MPI_Get_count(long status, long datatype, long count) {
    try {
      return (int) MPI_Get_count.H.invokeExact(status, datatype, count);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Ibarrier {
    static final MethodHandle H = handle("MPI_Ibarrier", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)} */
  public static int MPI_Ibarrier(long comm, long request) {
    try {
      return (int) MPI_Ibarrier.H.invokeExact(comm, request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Request_free {
    static final MethodHandle H = handle("MPI_Request_free", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Request_free(MPI_Request *request)} */
  public static int MPI_Request_free(long request) {
    try {
      return (int) MPI_Request_free.H.invokeExact(request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Cancel {
    static final MethodHandle H = handle("MPI_Cancel", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Cancel(MPI_Request *request)} */
  public static int MPI_Cancel(long request) {
    try {
      return (int) MPI_Cancel.H.invokeExact(request);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class MPI_Comm_split {
    static final MethodHandle H = handle("MPI_Comm_split", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG));
  }

  /** {@code int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)} */
  public static int MPI_Comm_split(long comm, int color, int key, long newcomm) {
    try {
      return (int) MPI_Comm_split.H.invokeExact(comm, color, key, newcomm);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }
}
