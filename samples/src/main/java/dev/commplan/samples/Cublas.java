package dev.commplan.samples;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * A cuBLAS handle (libcublas.so.13, CUDA 13) bound to one CUDA stream, with the few single-precision
 * routines the {@code overlap} sample's GPU compute calls, through FFM. Each call enqueues its kernel on
 * the stream and returns; every status is checked ({@link CudaCallException} names the function, the
 * status and cuBLAS's description of it).
 *
 * <p>Matrices are column-major, as in cuBLAS; device pointers are {@code long}s ({@code
 * NcclInterop.devicePointer}). Scalars are passed by reference from host memory the handle owns (cuBLAS
 * reads them before the call returns, {@code CUBLAS_POINTER_MODE_HOST}), except {@link #dot}'s result,
 * which is written to device memory so that the host never waits for it.
 *
 * <p>Not thread-safe: a rank uses its handle from its own thread, as cuBLAS asks.
 */
final class Cublas implements AutoCloseable {
  static final String SONAME = "libcublas.so.13";
  /** The system property that names the library to load instead: a path, or a name for the dynamic loader. */
  static final String PROPERTY = "commplan.cublas.library";

  private static final int OP_N = 0;
  private static final int OP_T = 1;
  private static final int POINTER_MODE_HOST = 0;
  private static final int POINTER_MODE_DEVICE = 1;

  private static final List<String> FUNCTIONS = List.of("cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2",
      "cublasSetPointerMode_v2", "cublasSgemm_v2", "cublasSgemv_v2", "cublasSgeam", "cublasSaxpy_v2",
      "cublasSscal_v2", "cublasSdot_v2", "cublasGetStatusName", "cublasGetStatusString");

  /** Opened on first use. */
  private static final class Library {
    static final SampleLibrary LIBRARY = SampleLibrary.open("the overlap sample's GPU compute (cuBLAS GEMMs)",
        SONAME, PROPERTY, FUNCTIONS, "install cuBLAS 13 (libcublas-13-0, in the CUDA 13 toolkit)");
  }

  /** Linked on first use, which comes after {@link #unavailableReason()} said the library is there. */
  private static final class Calls {
    private static final FunctionDescriptor STATUS_OF_HANDLE = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);

    static final MethodHandle CREATE = link("cublasCreate_v2", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle DESTROY = link("cublasDestroy_v2", STATUS_OF_HANDLE);
    static final MethodHandle SET_STREAM = link("cublasSetStream_v2", status(JAVA_LONG, JAVA_LONG));
    static final MethodHandle SET_POINTER_MODE = link("cublasSetPointerMode_v2", status(JAVA_LONG, JAVA_INT));
    // (handle, transa, transb, m, n, k, alpha*, A, lda, B, ldb, beta*, C, ldc)
    static final MethodHandle SGEMM = link("cublasSgemm_v2", status(JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT,
        JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    // (handle, trans, m, n, alpha*, A, lda, x, incx, beta*, y, incy)
    static final MethodHandle SGEMV = link("cublasSgemv_v2", status(JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT,
        JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
    // (handle, transa, transb, m, n, alpha*, A, lda, beta*, B, ldb, C, ldc)
    static final MethodHandle SGEAM = link("cublasSgeam", status(JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT,
        JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT));
    // (handle, n, alpha*, x, incx, y, incy)
    static final MethodHandle SAXPY = link("cublasSaxpy_v2", status(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG,
        JAVA_INT, JAVA_LONG, JAVA_INT));
    // (handle, n, alpha*, x, incx)
    static final MethodHandle SSCAL = link("cublasSscal_v2", status(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG,
        JAVA_INT));
    // (handle, n, x, incx, y, incy, result*)
    static final MethodHandle SDOT = link("cublasSdot_v2", status(JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_INT,
        JAVA_LONG, JAVA_INT, JAVA_LONG));
    static final MethodHandle STATUS_NAME = link("cublasGetStatusName", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    static final MethodHandle STATUS_STRING = link("cublasGetStatusString", FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private static FunctionDescriptor status(MemoryLayout... arguments) {
      return FunctionDescriptor.of(JAVA_INT, arguments);
    }

    private static MethodHandle link(String function, FunctionDescriptor descriptor) {
      return Library.LIBRARY.downcall(function, descriptor);
    }
  }

  private final long handle;
  private final Arena arena = Arena.ofShared();
  /** alpha at 0, beta at 4: what the routines read their scalars from. */
  private final MemorySegment scalars = arena.allocate(JAVA_FLOAT, 2);
  private boolean closed;

  private Cublas(long handle) {
    this.handle = handle;
  }

  /** Null when cuBLAS can be used here; else what was tried and what to do. */
  static String unavailableReason() {
    return Library.LIBRARY.problem();
  }

  /**
   * A handle on the calling thread's current device whose work goes to {@code cudaStream}.
   *
   * @param cudaStream a {@code cudaStream_t} of that device ({@code NcclInterop.cudaStream})
   * @throws IllegalStateException if cuBLAS is not there ({@link #unavailableReason()} says why)
   */
  static Cublas create(long cudaStream) {
    String problem = unavailableReason();
    if (problem != null) {
      throw new IllegalStateException(problem);
    }
    long handle;
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(JAVA_LONG);
      check("cublasCreate_v2", (int) Calls.CREATE.invokeExact(out));
      handle = out.get(JAVA_LONG, 0);
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
    Cublas blas = new Cublas(handle);
    try {
      check("cublasSetStream_v2", (int) Calls.SET_STREAM.invokeExact(handle, cudaStream));
    } catch (Throwable t) {
      blas.close();
      throw SampleLibrary.rethrown(t);
    }
    return blas;
  }

  /** {@code C = alpha op(A) op(B) + beta C}; {@code op(A)} is {@code m x k}, {@code op(B)} {@code k x n}. */
  void gemm(boolean transA, boolean transB, int m, int n, int k, float alpha, long a, int lda, long b, int ldb,
      float beta, long c, int ldc) {
    setScalars(alpha, beta);
    try {
      check("cublasSgemm_v2", (int) Calls.SGEMM.invokeExact(handle, op(transA), op(transB), m, n, k, alphaAddress(),
          a, lda, b, ldb, betaAddress(), c, ldc));
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  /** {@code y = alpha A x + beta y}, {@code A} of {@code m x n}, unit strides. */
  void gemv(int m, int n, float alpha, long a, int lda, long x, float beta, long y) {
    setScalars(alpha, beta);
    try {
      check("cublasSgemv_v2", (int) Calls.SGEMV.invokeExact(handle, OP_N, m, n, alphaAddress(), a, lda, x, 1,
          betaAddress(), y, 1));
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  /** {@code C = alpha A + beta B}, all {@code m x n}, not transposed. */
  void geam(int m, int n, float alpha, long a, int lda, float beta, long b, int ldb, long c, int ldc) {
    setScalars(alpha, beta);
    try {
      check("cublasSgeam", (int) Calls.SGEAM.invokeExact(handle, OP_N, OP_N, m, n, alphaAddress(), a, lda,
          betaAddress(), b, ldb, c, ldc));
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  /** {@code y += alpha x} over {@code n} elements. */
  void axpy(int n, float alpha, long x, long y) {
    setScalars(alpha, 0f);
    try {
      check("cublasSaxpy_v2", (int) Calls.SAXPY.invokeExact(handle, n, alphaAddress(), x, 1, y, 1));
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  /** {@code x *= alpha} over {@code n} elements. */
  void scal(int n, float alpha, long x) {
    setScalars(alpha, 0f);
    try {
      check("cublasSscal_v2", (int) Calls.SSCAL.invokeExact(handle, n, alphaAddress(), x, 1));
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  /** {@code *result = x . y} over {@code n} elements, written to device memory at {@code result}. */
  void dot(int n, long x, long y, long result) {
    try {
      check("cublasSetPointerMode_v2", (int) Calls.SET_POINTER_MODE.invokeExact(handle, POINTER_MODE_DEVICE));
      try {
        check("cublasSdot_v2", (int) Calls.SDOT.invokeExact(handle, n, x, 1, y, 1, result));
      } finally {
        check("cublasSetPointerMode_v2", (int) Calls.SET_POINTER_MODE.invokeExact(handle, POINTER_MODE_HOST));
      }
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  /** Destroys the handle (after the work enqueued so far, as cuBLAS does); idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      check("cublasDestroy_v2", (int) Calls.DESTROY.invokeExact(handle));
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    } finally {
      arena.close();
    }
  }

  private void setScalars(float alpha, float beta) {
    if (closed) {
      throw new IllegalStateException("the cuBLAS handle was closed");
    }
    scalars.set(JAVA_FLOAT, 0, alpha);
    scalars.set(JAVA_FLOAT, 4, beta);
  }

  private long alphaAddress() {
    return scalars.address();
  }

  private long betaAddress() {
    return scalars.address() + 4;
  }

  private static int op(boolean transpose) {
    return transpose ? OP_T : OP_N;
  }

  /** Throws {@link CudaCallException} unless {@code status} is {@code CUBLAS_STATUS_SUCCESS}. */
  private static void check(String function, int status) throws Throwable {
    if (status != 0) {
      throw new CudaCallException(function + " failed: " + SampleLibrary.cString((MemorySegment) Calls.STATUS_NAME
          .invokeExact(status)) + " (" + status + "), " + SampleLibrary.cString((MemorySegment) Calls.STATUS_STRING
          .invokeExact(status)));
    }
  }
}
