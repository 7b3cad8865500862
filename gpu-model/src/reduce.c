/*
 * NCCL's data types and reduction operators, computed on the CPU as NCCL's kernels compute them
 * (src/device/reduce_kernel.h and src/enqueue.cc hostToDevRedOp of NVIDIA/nccl v2.30.7):
 *
 *   - integers wrap (two's complement); MIN/MAX compare signed or unsigned as the type is;
 *   - AVG on integers is SumPostDiv: the wrapped sum, then divided by the rank count, truncating toward zero
 *     (FuncSumPostDiv::divide);
 *   - AVG on floating-point types is PreMulSum: every rank's input is first multiplied by 1/nranks held in the
 *     type itself (__float2half(1.0/n), __float2bfloat16(...), fp8 with __NV_SATFINITE), the product rounded to
 *     the type, then summed;
 *   - half and bfloat16 are computed in float and rounded to nearest even back to the type after every
 *     operation (__hadd/__hmul on sm_90 are correctly rounded, and a float holds the exact sum or product of two
 *     such values closely enough that rounding twice is harmless: 24 >= 2*11+2);
 *   - fp8 (e4m3, e5m2) is computed in half (__hadd(__half(x), __half(y)) and __hmul), and the half result is
 *     converted back with __NV_SATFINITE: out-of-range values and infinities saturate to the largest finite
 *     value (448 for e4m3, 57344 for e5m2), NaN stays NaN;
 *   - the reduction runs in rank order, ((x0 op x1) op x2) ..., rounding after every step, the same on every
 *     rank (NCCL's ring reduces each chunk once and broadcasts it, so all ranks get the same bits).
 */
#include <math.h>
#include <string.h>

#include "model.h"

size_t dtype_size(int dtype) {
  switch (dtype) {
  case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
  case ncclFloat16: case ncclBfloat16: return 2;
  case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
  case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
  default: return 0;
  }
}

int dtype_is_float(int dtype) {
  return dtype >= ncclFloat16 && dtype != ncclInt8 && dtype != ncclUint8 && dtype <= ncclFloat8e5m2;
}

/* ---------------------------------------------------------------- conversions */

/* Rounds |a| (finite, >= 0) to a binary format with manBits explicit mantissa bits and exponent bias `bias`,
   to nearest, ties to even (nearbyint in the default rounding mode), subnormals included. */
static double quantize(double a, int manBits, int bias) {
  if (a == 0) return 0;
  double minNormal = ldexp(1.0, 1 - bias);
  double q = a >= minNormal ? ldexp(1.0, ilogb(a) - manBits) : ldexp(1.0, 1 - bias - manBits);
  return nearbyint(a / q) * q;
}

/* Encodes r (exactly representable, finite, >= 0) in the format. */
static uint32_t encode(double r, int manBits, int bias) {
  if (r == 0) return 0;
  double minNormal = ldexp(1.0, 1 - bias);
  if (r < minNormal) return (uint32_t)(r / ldexp(1.0, 1 - bias - manBits));
  int e = ilogb(r);
  uint32_t m = (uint32_t)(r / ldexp(1.0, e - manBits)) - (1u << manBits);
  return ((uint32_t)(e + bias) << manBits) | m;
}

static double decode(uint32_t bits, int expBits, int manBits, int bias) {
  uint32_t e = (bits >> manBits) & ((1u << expBits) - 1);
  uint32_t m = bits & ((1u << manBits) - 1);
  if (e == 0) return ldexp((double)m, 1 - bias - manBits);
  return ldexp((double)((1u << manBits) | m), (int)e - bias - manBits);
}

float half_to_float(uint16_t h) {
  uint32_t sign = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0x1f) v = m ? NAN : INFINITY;
  else v = decode(h & 0x7fff, 5, 10, 15);
  return (float)(sign ? -v : v);
}

/* __float2half_rn: to nearest even; overflow to infinity (65520 and above). */
uint16_t float_to_half(float f) {
  uint16_t sign = signbit(f) ? 0x8000 : 0;
  if (isnan(f)) return 0x7e00 | sign;
  double a = fabs((double)f);
  if (isinf(a)) return 0x7c00 | sign;
  double r = quantize(a, 10, 15);
  if (r > 65504.0) return 0x7c00 | sign;
  return (uint16_t)(encode(r, 10, 15) | sign);
}

float bf16_to_float(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* __float2bfloat16: to nearest even, NaN kept (quiet). */
uint16_t float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  if (isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}

float fp8_to_float(uint8_t v, int e5m2) {
  int sign = v & 0x80;
  uint8_t mag = v & 0x7f;
  double r;
  if (e5m2) {
    if (mag >= 0x7d) r = NAN;
    else if (mag == 0x7c) r = INFINITY;
    else r = decode(mag, 5, 2, 15);
  } else {
    if (mag == 0x7f) r = NAN;
    else r = decode(mag, 4, 3, 7);
  }
  return (float)(sign ? -r : r);
}

/* __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...): to nearest even; beyond the largest finite value
   (infinity included) saturates to it; NaN gives NaN. */
uint8_t float_to_fp8(float f, int e5m2) {
  uint8_t sign = signbit(f) ? 0x80 : 0;
  if (isnan(f)) return 0x7f | sign;
  double maxv = e5m2 ? 57344.0 : 448.0;
  int man = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  double a = fabs((double)f);
  double r = isinf(a) ? maxv : quantize(a, man, bias);
  if (r > maxv) r = maxv;
  return (uint8_t)(encode(r, man, bias) | sign);
}

/* ---------------------------------------------------------------- element access */

static double load_f(int dtype, const void *p, size_t i) {
  switch (dtype) {
  case ncclFloat16: return half_to_float(((const uint16_t *)p)[i]);
  case ncclBfloat16: return bf16_to_float(((const uint16_t *)p)[i]);
  case ncclFloat32: return ((const float *)p)[i];
  case ncclFloat64: return ((const double *)p)[i];
  case ncclFloat8e4m3: return fp8_to_float(((const uint8_t *)p)[i], 0);
  case ncclFloat8e5m2: return fp8_to_float(((const uint8_t *)p)[i], 1);
  default: return 0;
  }
}

/* Rounds v to the type as the type's arithmetic does (fp8 through half), and stores it. */
static void store_f(int dtype, void *p, size_t i, double v) {
  switch (dtype) {
  case ncclFloat16: ((uint16_t *)p)[i] = float_to_half((float)v); break;
  case ncclBfloat16: ((uint16_t *)p)[i] = float_to_bf16((float)v); break;
  case ncclFloat32: ((float *)p)[i] = (float)v; break;
  case ncclFloat64: ((double *)p)[i] = v; break;
  case ncclFloat8e4m3: ((uint8_t *)p)[i] = float_to_fp8(half_to_float(float_to_half((float)v)), 0); break;
  case ncclFloat8e5m2: ((uint8_t *)p)[i] = float_to_fp8(half_to_float(float_to_half((float)v)), 1); break;
  default: break;
  }
}

/* The operation in the precision the type computes in: float for the 8- and 16-bit types (their exact result
   rounded once more by store_f), double for f64. */
static double apply_f(int dtype, int op, double a, double b) {
  if (dtype == ncclFloat64) {
    switch (op) {
    case ncclProd: return a * b;
    case ncclMax: return fmax(a, b);
    case ncclMin: return fmin(a, b);
    default: return a + b;
    }
  }
  float x = (float)a, y = (float)b;
  switch (op) {
  case ncclProd: return x * y;
  case ncclMax: return fmaxf(x, y);
  case ncclMin: return fminf(x, y);
  default: return x + y;
  }
}

/* 1/nranks as the type holds it (hostToDevRedOp), as a double. */
static double premul_scalar(int dtype, int nranks) {
  double s = 1.0 / nranks;
  switch (dtype) {
  case ncclFloat16: return half_to_float(float_to_half((float)s));
  case ncclBfloat16: return bf16_to_float(float_to_bf16((float)s));
  case ncclFloat32: return (float)s;
  case ncclFloat8e4m3: return fp8_to_float(float_to_fp8((float)s, 0), 0);
  case ncclFloat8e5m2: return fp8_to_float(float_to_fp8((float)s, 1), 1);
  default: return s;
  }
}

#define REDUCE_NATIVE(T)                                                                              \
  do {                                                                                                \
    T *o = out;                                                                                       \
    for (size_t i = 0; i < count; i++) {                                                              \
      T acc = ((const T *)in[0])[i];                                                                  \
      for (int r = 1; r < n; r++) {                                                                   \
        T x = ((const T *)in[r])[i];                                                                  \
        acc = op == ncclProd ? acc * x : op == ncclMax ? (x > acc || acc != acc ? x : acc)            \
            : op == ncclMin ? (x < acc || acc != acc ? x : acc) : acc + x;                            \
      }                                                                                               \
      o[i] = acc;                                                                                     \
    }                                                                                                 \
  } while (0)

static void reduce_float(int dtype, int op, int n, const void *const *in, void *out, size_t count) {
  if (op != ncclAvg && dtype == ncclFloat32) { /* the same arithmetic as below, without the conversions */
    REDUCE_NATIVE(float);
    return;
  }
  if (op != ncclAvg && dtype == ncclFloat64) {
    REDUCE_NATIVE(double);
    return;
  }
  double scalar = op == ncclAvg ? premul_scalar(dtype, n) : 1;
  int sumOp = op == ncclAvg ? ncclSum : op;
  for (size_t i = 0; i < count; i++) {
    double acc = 0;
    for (int r = 0; r < n; r++) {
      double x = load_f(dtype, in[r], i);
      if (op == ncclAvg) { /* PreMulSum's preOp: x * scalar, rounded to the type */
        store_f(dtype, out, i, apply_f(dtype, ncclProd, x, scalar));
        x = load_f(dtype, out, i);
      }
      if (r == 0) {
        acc = x;
      } else {
        store_f(dtype, out, i, apply_f(dtype, sumOp, acc, x));
        acc = load_f(dtype, out, i);
      }
    }
    store_f(dtype, out, i, acc);
  }
}

#define REDUCE_INT(T, U, SIGNED)                                                                      \
  do {                                                                                                \
    for (size_t i = 0; i < count; i++) {                                                              \
      U acc = (U)((const T *)in[0])[i];                                                               \
      for (int r = 1; r < n; r++) {                                                                   \
        U x = (U)((const T *)in[r])[i];                                                               \
        switch (op) {                                                                                 \
        case ncclProd: acc = (U)(acc * x); break;                                                     \
        case ncclMax: acc = (T)x > (T)acc ? x : acc; break;                                           \
        case ncclMin: acc = (T)x < (T)acc ? x : acc; break;                                           \
        default: acc = (U)(acc + x); break;                                                           \
        }                                                                                             \
      }                                                                                               \
      if (op == ncclAvg) { /* FuncSumPostDiv::divide: |x| / n, the sign put back */                   \
        int neg = SIGNED && ((acc >> (sizeof(T) * 8 - 1)) & 1);                                         \
        U mag = neg ? (U)(0 - acc) : acc;                                                             \
        mag = (U)(mag / (U)n);                                                                        \
        acc = neg ? (U)(0 - mag) : mag;                                                               \
      }                                                                                               \
      ((T *)out)[i] = (T)acc;                                                                         \
    }                                                                                                 \
  } while (0)

void reduce_elems(int dtype, int op, int n, const void *const *in, void *out, size_t count) {
  switch (dtype) {
  case ncclInt8: REDUCE_INT(int8_t, uint8_t, 1); break;
  case ncclUint8: REDUCE_INT(uint8_t, uint8_t, 0); break;
  case ncclInt32: REDUCE_INT(int32_t, uint32_t, 1); break;
  case ncclUint32: REDUCE_INT(uint32_t, uint32_t, 0); break;
  case ncclInt64: REDUCE_INT(int64_t, uint64_t, 1); break;
  case ncclUint64: REDUCE_INT(uint64_t, uint64_t, 0); break;
  default: reduce_float(dtype, op, n, in, out, count); break;
  }
}

/* The mutation switch: makes one element clearly wrong (an integer +1, a float negated and doubled, or 1
   where it was 0), so that any check of the result sees it. */
void mutate_elem(int dtype, void *elem) {
  switch (dtype) {
  case ncclInt8: case ncclUint8: (*(uint8_t *)elem)++; return;
  case ncclInt32: case ncclUint32: (*(uint32_t *)elem)++; return;
  case ncclInt64: case ncclUint64: (*(uint64_t *)elem)++; return;
  default: {
    double v = load_f(dtype, elem, 0);
    store_f(dtype, elem, 0, v == 0 || isnan(v) ? 1.0 : -2.0 * v);
    return;
  }
  }
}
