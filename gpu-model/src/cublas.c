/*
 * The few single-precision cuBLAS functions the overlap sample calls (samples/.../Cublas.java, loaded through
 * -Dcommplan.cublas.library), as kernels on the handle's stream: each call is checked and enqueued, and
 * returns before it runs.
 *
 * Rules (cuBLAS documentation, "cuBLAS Datatypes Reference" and "Scalar Parameters"):
 *  - matrices are column-major, op(X) is X or its transpose; beta == 0 means C is not read;
 *  - with CUBLAS_POINTER_MODE_HOST (the default) alpha and beta are read when the call is made; with
 *    CUBLAS_POINTER_MODE_DEVICE they are device memory read when the kernel runs, and a dot product's result
 *    is written to device memory then; in host mode the dot product's call returns once the result is there;
 *  - work runs on the stream cublasSetStream_v2 gave the handle (the legacy stream before that);
 *  - memory that is no device allocation faults the device as any kernel's illegal address would.
 * Sums are computed in float, in index order (cuBLAS's order and its fused multiply-adds differ: the sample
 * checks within a tolerance).
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

enum {
  CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_NOT_INITIALIZED = 1, CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_EXECUTION_FAILED = 13, CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
enum { OP_N = 0, OP_T = 1 };
enum { POINTER_HOST = 0, POINTER_DEVICE = 1 };
#define MAGIC_BLAS 0x424c4153u

typedef struct Blas {
  uint32_t magic;
  uintptr_t stream;
  int pointerMode;
  int device;
} Blas;

enum BlasOp { B_GEMM, B_GEMV, B_GEAM, B_AXPY, B_SCAL, B_DOT };

typedef struct BlasCall {
  enum BlasOp op;
  int ta, tb, m, n, k, lda, ldb, ldc, incx, incy, deviceScalars;
  float alpha, beta;
  const float *alphaPtr, *betaPtr; /* device pointer mode */
  const float *a, *b;
  float *c;
  float *result; /* dot: device memory (device mode) or host memory (host mode) */
  int hostResult;
} BlasCall;

EXPORT int cublasCreate_v2(Blas **out) {
  model_init();
  if (!out) return CUBLAS_STATUS_INVALID_VALUE;
  if (g.k.devices == 0) return CUBLAS_STATUS_NOT_INITIALIZED;
  Blas *b = calloc(1, sizeof *b);
  b->magic = MAGIC_BLAS;
  b->device = current_device();
  *out = b;
  return CUBLAS_STATUS_SUCCESS;
}

EXPORT int cublasDestroy_v2(Blas *b) {
  if (!b || b->magic != MAGIC_BLAS) return CUBLAS_STATUS_NOT_INITIALIZED;
  b->magic = 0; /* kept: work already enqueued does not refer to it */
  return CUBLAS_STATUS_SUCCESS;
}

EXPORT int cublasSetStream_v2(Blas *b, uintptr_t stream) {
  if (!b || b->magic != MAGIC_BLAS) return CUBLAS_STATUS_NOT_INITIALIZED;
  b->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

EXPORT int cublasSetPointerMode_v2(Blas *b, int mode) {
  if (!b || b->magic != MAGIC_BLAS) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != POINTER_HOST && mode != POINTER_DEVICE) return CUBLAS_STATUS_INVALID_VALUE;
  b->pointerMode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

EXPORT const char *cublasGetStatusName(int status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

EXPORT const char *cublasGetStatusString(int status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
  case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
  default: return "unknown error";
  }
}

/* The bytes a column-major rows x cols matrix with leading dimension ld spans; a strided vector's likewise. */
static size_t span(int rows, int cols, int ld) {
  return rows <= 0 || cols <= 0 ? 0 : ((size_t)(cols - 1) * (size_t)ld + (size_t)rows) * sizeof(float);
}

static size_t vspan(int n, int inc) {
  return n <= 0 ? 0 : ((size_t)(n - 1) * (size_t)abs(inc) + 1) * sizeof(float);
}

static float at(const float *x, int i, int inc) {
  return x[(size_t)i * (size_t)inc];
}

static void run_blas(void *arg, int device) {
  BlasCall *c = arg;
  Alloc *pins[5] = {NULL};
  const void *ptr[5] = {0};
  size_t len[5] = {0};
  int ra = c->ta == OP_N ? c->m : c->k, ca = c->ta == OP_N ? c->k : c->m;
  switch (c->op) {
  case B_GEMM:
    ptr[0] = c->a, len[0] = span(ra, ca, c->lda);
    ptr[1] = c->b, len[1] = span(c->tb == OP_N ? c->k : c->n, c->tb == OP_N ? c->n : c->k, c->ldb);
    ptr[2] = c->c, len[2] = span(c->m, c->n, c->ldc);
    break;
  case B_GEMV:
    ptr[0] = c->a, len[0] = span(c->m, c->n, c->lda);
    ptr[1] = c->b, len[1] = vspan(c->ta == OP_N ? c->n : c->m, c->incx);
    ptr[2] = c->c, len[2] = vspan(c->ta == OP_N ? c->m : c->n, c->incy);
    break;
  case B_GEAM:
    ptr[0] = c->a, len[0] = span(c->ta == OP_N ? c->m : c->n, c->ta == OP_N ? c->n : c->m, c->lda);
    ptr[1] = c->b, len[1] = span(c->tb == OP_N ? c->m : c->n, c->tb == OP_N ? c->n : c->m, c->ldb);
    ptr[2] = c->c, len[2] = span(c->m, c->n, c->ldc);
    break;
  case B_AXPY: case B_DOT:
    ptr[0] = c->a, len[0] = vspan(c->n, c->incx);
    ptr[1] = c->b, len[1] = vspan(c->n, c->incy);
    if (c->op == B_DOT && !c->hostResult) ptr[2] = c->result, len[2] = sizeof(float);
    break;
  case B_SCAL: ptr[0] = c->c, len[0] = vspan(c->n, c->incx); break;
  }
  if (c->deviceScalars) {
    ptr[3] = c->alphaPtr, len[3] = c->alphaPtr ? sizeof(float) : 0;
    ptr[4] = c->betaPtr, len[4] = c->betaPtr ? sizeof(float) : 0;
  }
  for (int i = 0; i < 5; i++) {
    if (len[i] && pin_range(ptr[i], len[i], &pins[i])) {
      device_fault(device, "a cuBLAS kernel's operand is no device memory");
      for (int j = 0; j < i; j++) unpin(pins[j]);
      return;
    }
  }
  float alpha = c->deviceScalars && c->alphaPtr ? *c->alphaPtr : c->alpha;
  float beta = c->deviceScalars && c->betaPtr ? *c->betaPtr : c->beta;
  switch (c->op) {
  case B_GEMM:
    for (int j = 0; j < c->n; j++) {
      for (int i = 0; i < c->m; i++) {
        float s = 0;
        for (int l = 0; l < c->k; l++) {
          float x = c->ta == OP_N ? c->a[i + (size_t)l * c->lda] : c->a[l + (size_t)i * c->lda];
          float y = c->tb == OP_N ? c->b[l + (size_t)j * c->ldb] : c->b[j + (size_t)l * c->ldb];
          s += x * y;
        }
        float *out = &c->c[i + (size_t)j * c->ldc];
        *out = beta == 0 ? alpha * s : alpha * s + beta * *out;
      }
    }
    break;
  case B_GEMV: {
    int rows = c->ta == OP_N ? c->m : c->n, inner = c->ta == OP_N ? c->n : c->m;
    float *tmp = malloc(sizeof(float) * (size_t)(rows > 0 ? rows : 1));
    for (int i = 0; i < rows; i++) {
      float s = 0;
      for (int l = 0; l < inner; l++) {
        float x = c->ta == OP_N ? c->a[i + (size_t)l * c->lda] : c->a[l + (size_t)i * c->lda];
        s += x * at(c->b, l, c->incx);
      }
      tmp[i] = s;
    }
    for (int i = 0; i < rows; i++) {
      float *out = &c->c[(size_t)i * c->incy];
      *out = beta == 0 ? alpha * tmp[i] : alpha * tmp[i] + beta * *out;
    }
    free(tmp);
    break;
  }
  case B_GEAM:
    for (int j = 0; j < c->n; j++) {
      for (int i = 0; i < c->m; i++) {
        float x = c->ta == OP_N ? c->a[i + (size_t)j * c->lda] : c->a[j + (size_t)i * c->lda];
        float y = c->tb == OP_N ? c->b[i + (size_t)j * c->ldb] : c->b[j + (size_t)i * c->ldb];
        c->c[i + (size_t)j * c->ldc] = (alpha == 0 ? 0 : alpha * x) + (beta == 0 ? 0 : beta * y);
      }
    }
    break;
  case B_AXPY:
    for (int i = 0; i < c->n; i++) ((float *)c->b)[(size_t)i * c->incy] += alpha * at(c->a, i, c->incx);
    break;
  case B_SCAL:
    for (int i = 0; i < c->n; i++) c->c[(size_t)i * c->incx] *= alpha;
    break;
  case B_DOT: {
    float s = 0;
    for (int i = 0; i < c->n; i++) s += at(c->a, i, c->incx) * at(c->b, i, c->incy);
    *c->result = s;
    break;
  }
  }
  for (int i = 0; i < 5; i++) unpin(pins[i]);
}

/* Checks the handle, reads host-mode scalars now, and enqueues the kernel on the handle's stream. */
static int enqueue(Blas *b, BlasCall *call, const float *alpha, const float *beta) {
  model_init();
  if (!b || b->magic != MAGIC_BLAS) {
    free(call);
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  call->deviceScalars = b->pointerMode == POINTER_DEVICE;
  if (call->deviceScalars) {
    call->alphaPtr = alpha;
    call->betaPtr = beta;
  } else {
    call->alpha = alpha ? *alpha : 0;
    call->beta = beta ? *beta : 0;
  }
  call->hostResult = call->op == B_DOT && !call->deviceScalars;
  lock();
  Stream *s;
  int rc = stream_resolve(b->stream, &s);
  if (!rc && s->cap) rc = cudaErrorStreamCaptureUnsupported; /* captured kernels of cuBLAS are not modelled */
  if (!rc) rc = legacy_capture_conflict(s);
  if (rc) {
    unlock();
    free(call);
    return rc == cudaErrorStreamCaptureUnsupported ? CUBLAS_STATUS_NOT_SUPPORTED : CUBLAS_STATUS_EXECUTION_FAILED;
  }
  Work *w = work_new(W_FN);
  w->u.fn.run = run_blas;
  w->u.fn.arg = call;
  int hostResult = call->hostResult;
  stream_enqueue(s, w);
  if (hostResult) wait_stream(s, w->seq); /* the result is on the host when the call returns */
  unlock();
  return CUBLAS_STATUS_SUCCESS;
}

static BlasCall *call_new(enum BlasOp op) {
  BlasCall *c = calloc(1, sizeof *c);
  c->op = op;
  return c;
}

EXPORT int cublasSgemm_v2(Blas *h, int ta, int tb, int m, int n, int k, const float *alpha, const float *a, int lda,
                          const float *bm, int ldb, const float *beta, float *cm, int ldc) {
  if (m < 0 || n < 0 || k < 0 || (ta != OP_N && ta != OP_T) || (tb != OP_N && tb != OP_T)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (lda < (ta == OP_N ? (m > 1 ? m : 1) : (k > 1 ? k : 1)) || lda < 1 || ldb < 1 || ldc < (m > 1 ? m : 1)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  BlasCall *c = call_new(B_GEMM);
  *c = (BlasCall){.op = B_GEMM, .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc,
                  .a = a, .b = bm, .c = cm};
  return enqueue(h, c, alpha, beta);
}

EXPORT int cublasSgemv_v2(Blas *h, int trans, int m, int n, const float *alpha, const float *a, int lda,
                          const float *x, int incx, const float *beta, float *y, int incy) {
  if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0 || (trans != OP_N && trans != OP_T)) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  BlasCall *c = call_new(B_GEMV);
  *c = (BlasCall){.op = B_GEMV, .ta = trans, .m = m, .n = n, .lda = lda, .incx = incx, .incy = incy, .a = a,
                  .b = x, .c = y};
  return enqueue(h, c, alpha, beta);
}

EXPORT int cublasSgeam(Blas *h, int ta, int tb, int m, int n, const float *alpha, const float *a, int lda,
                       const float *beta, const float *bm, int ldb, float *cm, int ldc) {
  if (m < 0 || n < 0 || ldc < (m > 1 ? m : 1) || lda < 1 || ldb < 1) return CUBLAS_STATUS_INVALID_VALUE;
  BlasCall *c = call_new(B_GEAM);
  *c = (BlasCall){.op = B_GEAM, .ta = ta, .tb = tb, .m = m, .n = n, .lda = lda, .ldb = ldb, .ldc = ldc, .a = a,
                  .b = bm, .c = cm};
  return enqueue(h, c, alpha, beta);
}

EXPORT int cublasSaxpy_v2(Blas *h, int n, const float *alpha, const float *x, int incx, float *y, int incy) {
  if (incx == 0 || incy == 0) return CUBLAS_STATUS_INVALID_VALUE;
  BlasCall *c = call_new(B_AXPY);
  *c = (BlasCall){.op = B_AXPY, .n = n, .incx = incx, .incy = incy, .a = x, .b = y};
  return enqueue(h, c, alpha, NULL);
}

EXPORT int cublasSscal_v2(Blas *h, int n, const float *alpha, float *x, int incx) {
  if (incx <= 0) return CUBLAS_STATUS_INVALID_VALUE;
  BlasCall *c = call_new(B_SCAL);
  *c = (BlasCall){.op = B_SCAL, .n = n, .incx = incx, .c = x};
  return enqueue(h, c, alpha, NULL);
}

EXPORT int cublasSdot_v2(Blas *h, int n, const float *x, int incx, const float *y, int incy, float *result) {
  if (!result || incx == 0 || incy == 0) return CUBLAS_STATUS_INVALID_VALUE;
  BlasCall *c = call_new(B_DOT);
  *c = (BlasCall){.op = B_DOT, .n = n, .incx = incx, .incy = incy, .a = x, .b = y, .result = result};
  return enqueue(h, c, NULL, NULL);
}
