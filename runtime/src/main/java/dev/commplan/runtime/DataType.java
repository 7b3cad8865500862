package dev.commplan.runtime;

/** The element types a buffer can hold; each is the NCCL data type of the same name. */
public enum DataType {
  /** IEEE 754 binary16 ({@code ncclFloat16}). */
  F16(2),
  /** bfloat16 ({@code ncclBfloat16}). */
  BF16(2),
  /** IEEE 754 binary32 ({@code ncclFloat32}). */
  F32(4),
  /** IEEE 754 binary64 ({@code ncclFloat64}). */
  F64(8),
  /** signed 8-bit integer ({@code ncclInt8}). */
  I8(1),
  /** unsigned 8-bit integer ({@code ncclUint8}). */
  U8(1),
  /** signed 32-bit integer ({@code ncclInt32}). */
  I32(4),
  /** unsigned 32-bit integer ({@code ncclUint32}). */
  U32(4),
  /** signed 64-bit integer ({@code ncclInt64}). */
  I64(8),
  /** unsigned 64-bit integer ({@code ncclUint64}). */
  U64(8),
  /** 8-bit float, 4 exponent and 3 mantissa bits, no infinities ({@code ncclFloat8e4m3}, NCCL 2.24 and later). */
  F8E4M3(1),
  /** 8-bit float, 5 exponent and 2 mantissa bits, IEEE-like ({@code ncclFloat8e5m2}, NCCL 2.24 and later). */
  F8E5M2(1);

  private final int byteSize;

  DataType(int byteSize) {
    this.byteSize = byteSize;
  }

  /** {@return bytes per element} */
  public int byteSize() {
    return byteSize;
  }

  /** {@return whether this is a floating-point type (F16, BF16, F32, F64, F8E4M3, F8E5M2)} */
  public boolean isFloatingPoint() {
    return this == F16 || this == BF16 || this == F32 || this == F64 || isFloat8();
  }

  /** {@return whether this is one of the 8-bit floating-point types (F8E4M3, F8E5M2)} */
  public boolean isFloat8() {
    return this == F8E4M3 || this == F8E5M2;
  }

  /** {@return whether this is an unsigned integer type (U8, U32, U64)} */
  public boolean isUnsigned() {
    return this == U8 || this == U32 || this == U64;
  }
}
