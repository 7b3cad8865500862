// The finite check's kernels (@CommPlan(checkFinite), docs/dsl.md "Finite checks"): find the first element of a
// buffer whose exponent bits are all ones (an infinity or a NaN) and lower *first to its index. One kernel per
// element width, read as raw bits, with the type's mask: the same test serves every floating-point type CommPlan
// has, since each marks non-finite values by an all-ones exponent field:
//   F64 0x7FF0000000000000, F32 0x7F800000, F16 0x7C00, BF16 0x7F80, F8E5M2 0x7C,
//   F8E4M3 0x7F (it has no infinities; S.1111.111 is its NaN).
// *first must hold ~0 (no index) before the launch; the host reads it after the stream is synchronized.
//
// The runtime loads the PTX (runtime/src/main/resources/dev/commplan/runtime/kernels/nonfinite.ptx) through
// the CUDA driver API at run time, so users need no compiler. Regenerate it with bin/ptx-update after editing
// this file; NonFinitePtxTest checks the two agree where nvcc is present.

typedef unsigned long long u64;

template <typename T>
__device__ void findNonFinite(const T* data, u64 count, T mask, u64* first) {
  u64 stride = (u64)gridDim.x * blockDim.x;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    if ((data[i] & mask) == mask) {
      atomicMin(first, i);
      return;  // a later element of this thread's stride cannot be lower than this one
    }
  }
}

extern "C" __global__ void commplan_nonfinite_u8(const unsigned char* data, u64 count, unsigned int mask, u64* first) {
  findNonFinite<unsigned char>(data, count, (unsigned char)mask, first);
}

extern "C" __global__ void commplan_nonfinite_u16(const unsigned short* data, u64 count, unsigned int mask,
                                                  u64* first) {
  findNonFinite<unsigned short>(data, count, (unsigned short)mask, first);
}

extern "C" __global__ void commplan_nonfinite_u32(const unsigned int* data, u64 count, unsigned int mask, u64* first) {
  findNonFinite<unsigned int>(data, count, mask, first);
}

extern "C" __global__ void commplan_nonfinite_u64(const u64* data, u64 count, u64 mask, u64* first) {
  findNonFinite<u64>(data, count, mask, first);
}
