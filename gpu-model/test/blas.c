/* The cuBLAS functions of the overlap sample: results, stream order, the two pointer modes. */
/* env: COMMPLAN_MODEL_DEVICES=2 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef struct Blas *blas_t;
int cublasCreate_v2(blas_t *);
int cublasDestroy_v2(blas_t);
int cublasSetStream_v2(blas_t, stream_t);
int cublasSetPointerMode_v2(blas_t, int);
int cublasSgemm_v2(blas_t, int, int, int, int, int, const float *, const float *, int, const float *, int,
                   const float *, float *, int);
int cublasSgemv_v2(blas_t, int, int, int, const float *, const float *, int, const float *, int, const float *,
                   float *, int);
int cublasSgeam(blas_t, int, int, int, int, const float *, const float *, int, const float *, const float *, int,
                float *, int);
int cublasSaxpy_v2(blas_t, int, const float *, const float *, int, float *, int);
int cublasSscal_v2(blas_t, int, const float *, float *, int);
int cublasSdot_v2(blas_t, int, const float *, int, const float *, int, float *);
const char *cublasGetStatusName(int);

static Gate gate;

static float *dev_floats(const float *h, int n) {
  float *d = NULL;
  OK(cudaMalloc((void **)&d, sizeof(float) * n));
  dev_write(d, h, sizeof(float) * n);
  return d;
}

/* C = alpha * A * B^T + beta * C, column-major, on a held stream: runs when the stream gets there, with the
   alpha and beta of the call (host pointer mode reads them at once). */
static void gemm_runs_in_stream_order_with_the_call_s_scalars(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  blas_t h;
  OK(cublasCreate_v2(&h));
  OK(cublasSetStream_v2(h, s));
  float A[6] = {1, 2, 3, 4, 5, 6}; /* 2x3: columns (1,2), (3,4), (5,6) */
  float B[6] = {1, 0, 0, 1, 1, 1}; /* 2x3: B^T is 3x2 */
  float C[4] = {1, 1, 1, 1};
  float *a = dev_floats(A, 6), *b = dev_floats(B, 6), *c = dev_floats(C, 4);
  float alpha = 2, beta = 1;
  gate_close(&gate, s);
  OK(cublasSgemm_v2(h, 0, 1, 2, 2, 3, &alpha, a, 2, b, 2, &beta, c, 2));
  alpha = 100; /* too late: read at the call */
  float got[4];
  dev_read(got, c, sizeof got);
  EQ(got[0], 1); /* not run yet */
  gate_open(&gate);
  OK(cudaStreamSynchronize(s));
  dev_read(got, c, sizeof got);
  /* A * B^T = [[1*1+3*0+5*1, 1*0+3*1+5*1], [2*1+4*0+6*1, 2*0+4*1+6*1]] = [[6, 8], [8, 10]] */
  EQ(got[0], 2 * 6 + 1);
  EQ(got[1], 2 * 8 + 1);
  EQ(got[2], 2 * 8 + 1);
  EQ(got[3], 2 * 10 + 1);
  OK(cublasDestroy_v2(h));
  OK(cudaFree(a));
  OK(cudaFree(b));
  OK(cudaFree(c));
  OK(cudaStreamDestroy(s));
}

static void the_vector_functions(void) {
  stream_t s;
  OK(cudaStreamCreateWithFlags(&s, NONBLOCKING));
  blas_t h;
  OK(cublasCreate_v2(&h));
  OK(cublasSetStream_v2(h, s));
  float A[4] = {1, 2, 3, 4}, X[2] = {1, 1}, Y[2] = {10, 20};
  float *a = dev_floats(A, 4), *x = dev_floats(X, 2), *y = dev_floats(Y, 2), *c = dev_floats(A, 4);
  float one = 1, zero = 0, three = 3;
  OK(cublasSgemv_v2(h, 0, 2, 2, &one, a, 2, x, 1, &one, y, 1)); /* y = A x + y = (4, 6) + (10, 20) */
  OK(cublasSaxpy_v2(h, 2, &three, x, 1, y, 1));                 /* y += 3 x */
  OK(cublasSscal_v2(h, 2, &three, x, 1));                       /* x = 3 x */
  OK(cublasSgeam(h, 1, 0, 2, 2, &one, a, 2, &zero, a, 2, c, 2)); /* C = A^T */
  float dot = -1;
  OK(cublasSdot_v2(h, 2, x, 1, y, 1, &dot)); /* host pointer mode: the result is there on return */
  EQ(dot, 3 * 17 + 3 * 29);
  float got[4];
  dev_read(got, y, 8);
  EQ(got[0], 17);
  EQ(got[1], 29);
  dev_read(got, c, 16);
  EQ(got[1], 3);
  EQ(got[2], 2);
  /* device pointer mode: the result goes to device memory, in stream order */
  float *r = dev_floats(&zero, 1);
  OK(cublasSetPointerMode_v2(h, 1));
  OK(cublasSdot_v2(h, 2, x, 1, x, 1, r));
  OK(cudaStreamSynchronize(s));
  dev_read(got, r, 4);
  EQ(got[0], 18);
  EQ(cublasSetPointerMode_v2(h, 5), 7);
  CHECK(strcmp(cublasGetStatusName(7), "CUBLAS_STATUS_INVALID_VALUE") == 0);
  OK(cublasDestroy_v2(h));
  OK(cudaFree(a));
  OK(cudaFree(x));
  OK(cudaFree(y));
  OK(cudaFree(c));
  OK(cudaFree(r));
  OK(cudaStreamDestroy(s));
}

int main(void) {
  gate_init(&gate, 0, 1);
  TEST(gemm_runs_in_stream_order_with_the_call_s_scalars);
  TEST(the_vector_functions);
  gate_free(&gate);
  return finish();
}
