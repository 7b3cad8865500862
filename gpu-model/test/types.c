/* Rule 5, types and operators: every type and operator, rounded as NCCL's kernels round
   (src/device/reduce_kernel.h): half and bfloat16 to nearest even, fp8 through half then saturated to the
   largest finite value, integers wrapped, integer AVG truncated toward zero, floating AVG as PreMulSum;
   ncclAvg on fp8 refused on one rank (src/device/onerank.cu). Expected bits are written out by hand. */
/* env: COMMPLAN_MODEL_DEVICES=3 */
#include <stdlib.h>
#include <string.h>

#include "check.h"

static comm_t comms[3][3]; /* comms[n-1]: a communicator of n ranks */
static stream_t streams[3];

typedef struct One {
  int n, rank, dtype, op;
  void *buf;
  int rc;
} One;

static int one_rank(void *p) {
  One *o = p;
  cudaSetDevice(o->rank);
  int rc = ncclAllReduce(o->buf, o->buf, 1, o->dtype, o->op, comms[o->n - 1][o->rank], streams[o->rank]);
  return rc ? rc : cudaStreamSynchronize(streams[o->rank]);
}

static size_t size_of(int t) {
  return t == I8 || t == U8 || t == E4M3 || t == E5M2 ? 1 : t == F16 || t == BF16 ? 2 : t == I32 || t == U32 || t == F32 ? 4 : 8;
}

/* The all-reduce of one element over n ranks (rank r gives in[r], raw bits); the result's bits, or -1 when
   a call failed. */
static long long reduce(int n, int dtype, int op, const unsigned long long *in) {
  One o[3];
  Call *c[3];
  size_t sz = size_of(dtype);
  for (int r = 0; r < n; r++) {
    OK(cudaSetDevice(r));
    o[r] = (One){n, r, dtype, op, NULL, 0};
    OK(cudaMalloc(&o[r].buf, 8));
    dev_write(o[r].buf, &in[r], sz);
  }
  for (int r = 0; r < n; r++) c[r] = call_start(one_rank, &o[r]);
  int failed = 0;
  for (int r = 0; r < n; r++) failed |= call_join(c[r]) != 0;
  unsigned long long out = 0, first = 0;
  for (int r = 0; r < n && !failed; r++) {
    OK(cudaSetDevice(r));
    out = 0;
    dev_read(&out, o[r].buf, sz);
    if (r == 0) first = out;
    EQ(out, first); /* every rank gets the same bits */
  }
  for (int r = 0; r < n; r++) {
    OK(cudaSetDevice(r));
    OK(cudaFree(o[r].buf));
  }
  OK(cudaSetDevice(0));
  return failed ? -1 : (long long)out;
}

static long long r2(int dtype, int op, unsigned long long a, unsigned long long b) {
  unsigned long long in[2] = {a, b};
  return reduce(2, dtype, op, in);
}

static long long r3(int dtype, int op, unsigned long long a, unsigned long long b, unsigned long long c) {
  unsigned long long in[3] = {a, b, c};
  return reduce(3, dtype, op, in);
}

static unsigned long long f32(float f) {
  unsigned u;
  memcpy(&u, &f, 4);
  return u;
}

static unsigned long long f64(double d) {
  unsigned long long u;
  memcpy(&u, &d, 8);
  return u;
}

static void integers_wrap_and_compare_by_sign(void) {
  EQ(r2(I8, SUM, 100, 100), 0xc8);               /* 200 wraps to -56 */
  EQ(r2(U8, SUM, 255, 1), 0);
  EQ(r2(I8, PROD, 16, 16), 0);                   /* 256 wraps to 0 */
  EQ(r2(I32, MAX, 0xffffffffu, 1), 1);           /* -1 < 1 */
  EQ(r2(U32, MAX, 0xffffffffu, 1), 0xffffffffu); /* unsigned */
  EQ(r2(I64, MIN, 0x8000000000000000ull, 5), (long long)0x8000000000000000ull);
  EQ(r2(U64, MIN, 0x8000000000000000ull, 5), 5);
  EQ(r3(I32, SUM, 1, 2, 3), 6);
}

/* SumPostDiv: the wrapped sum, divided, truncating toward zero. */
static void integer_average_truncates_toward_zero(void) {
  EQ(r2(I32, AVG, 0xfffffffdu, 0), 0xffffffffu); /* (-3 + 0) / 2 = -1 */
  EQ(r2(I32, AVG, 3, 0), 1);
  EQ(r2(I8, AVG, 100, 100), 0xe4);               /* -56 / 2 = -28 */
  EQ(r2(U8, AVG, 255, 255), 127);                /* 254 / 2 */
  EQ(r3(I64, AVG, 1, 1, 2), 1);
}

static void half_rounds_to_nearest_even(void) {
  EQ(r2(F16, SUM, 0x3c00, 0x1000), 0x3c00); /* 1 + 2^-11: a tie, to even (1) */
  EQ(r2(F16, SUM, 0x3c00, 0x1200), 0x3c01); /* 1 + 3*2^-12: past the halfway point, up to 1 + 2^-10 */
  EQ(r2(F16, SUM, 0x3c00, 0x1600), 0x3c02); /* 1 + 3*2^-11: a tie, to even (1 + 2^-9) */
  EQ(r2(F16, SUM, 0x7bff, 0x7bff), 0x7c00); /* 65504 + 65504: infinity */
  EQ(r2(F16, PROD, 0x4000, 0xc200), 0xc600); /* 2 * -3 = -6 */
  EQ(r2(F16, MAX, 0xc000, 0x3c00), 0x3c00);
  EQ(r2(F16, AVG, 0x3c00, 0x4000), 0x3e00); /* 1*0.5 + 2*0.5 = 1.5 */
}

static void bfloat16_rounds_to_nearest_even(void) {
  EQ(r2(BF16, SUM, 0x3f80, 0x3b80), 0x3f80); /* 1 + 2^-8: a tie, to even */
  EQ(r2(BF16, SUM, 0x3f80, 0x3c40), 0x3f82); /* 1 + 3*2^-8: a tie, to even (1 + 2^-6) */
  EQ(r2(BF16, MIN, 0xbf80, 0x3f80), 0xbf80);
}

/* fp8: computed in half, converted back with __NV_SATFINITE. */
static void fp8_saturates_at_its_largest_finite_value(void) {
  EQ(r2(E4M3, SUM, 0x7e, 0x7e), 0x7e);   /* 448 + 448: 448 */
  EQ(r2(E4M3, SUM, 0xfe, 0xfe), 0xfe);   /* -448 */
  EQ(r2(E4M3, SUM, 0x38, 0x18), 0x38);   /* 1 + 0.0625: a tie, to even (1) */
  EQ(r2(E4M3, SUM, 0x38, 0x38), 0x40);   /* 1 + 1 = 2 */
  EQ(r2(E4M3, PROD, 0x48, 0x4c), 0x5c);  /* 4 * 6 = 24 */
  EQ(r2(E5M2, SUM, 0x7b, 0x7b), 0x7b);   /* 57344 + 57344: 57344 */
  EQ(r2(E5M2, SUM, 0x3c, 0x30), 0x3c);   /* 1 + 0.125: a tie, to even (1) */
  EQ(r2(E5M2, MAX, 0xbc, 0x3c), 0x3c);
  EQ(r2(E4M3, AVG, 0x40, 0x48), 0x44);   /* fp8(1/2): 2*0.5 + 4*0.5 = 3 */
}

static void float_average_is_a_premultiplied_sum(void) {
  /* x * (float)(1/3) each, summed in float: 1/3 + 1/3 + 1/3 in float is 1 */
  float third = (float)(1.0 / 3);
  float want = third + third;
  want = want + third;
  EQ(r3(F32, AVG, f32(1), f32(1), f32(1)), f32(want));
  EQ(r2(F64, AVG, f64(1), f64(2)), f64(1.5));
  EQ(r2(F32, PROD, f32(1.5f), f32(-2)), f32(-3));
  EQ(r3(F64, SUM, f64(0.1), f64(0.2), f64(0.3)), f64((0.1 + 0.2) + 0.3)); /* in rank order */
}

/* ncclLaunchOneRank has no fp8 PreMulSum in host code: AVG on fp8 fails on one rank (and works on two). */
static void fp8_average_fails_on_one_rank(void) {
  void *b = NULL;
  OK(cudaMalloc(&b, 64));
  EQ(ncclAllReduce(b, b, 4, E4M3, AVG, comms[0][0], streams[0]), 4);
  EQ(ncclReduce(b, b, 4, E5M2, AVG, 0, comms[0][0], streams[0]), 4);
  OK(ncclAllReduce(b, b, 4, E4M3, SUM, comms[0][0], streams[0]));
  OK(ncclAllReduce(b, b, 4, F16, AVG, comms[0][0], streams[0]));
  EQ(ncclAllReduce(b, b, 4, F32, 5, comms[0][0], streams[0]), 4); /* no such operator */
  OK(cudaStreamSynchronize(streams[0]));
  OK(cudaFree(b));
}

int main(void) {
  for (int n = 1; n <= 3; n++) {
    int dev[3] = {0, 1, 2};
    comms_make(comms[n - 1], n, dev);
  }
  for (int r = 0; r < 3; r++) {
    OK(cudaSetDevice(r));
    OK(cudaStreamCreateWithFlags(&streams[r], NONBLOCKING));
  }
  OK(cudaSetDevice(0));
  /* connect each communicator (its first collective's host calls meet) */
  unsigned long long z[3] = {0, 0, 0};
  reduce(2, I32, SUM, z);
  reduce(3, I32, SUM, z);
  TEST(integers_wrap_and_compare_by_sign);
  TEST(integer_average_truncates_toward_zero);
  TEST(half_rounds_to_nearest_even);
  TEST(bfloat16_rounds_to_nearest_even);
  TEST(fp8_saturates_at_its_largest_finite_value);
  TEST(float_average_is_a_premultiplied_sum);
  TEST(fp8_average_fails_on_one_rank);
  return finish();
}
