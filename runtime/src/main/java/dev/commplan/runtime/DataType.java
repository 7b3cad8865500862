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
  U64(8);

  private final int byteSize;

  DataType(int byteSize) {
    this.byteSize = byteSize;
  }

  /** Bytes per element. */
  public int byteSize() {
    return byteSize;
  }

  /** Whether this is a floating-point type (F16, BF16, F32, F64). */
  public boolean isFloatingPoint() {
    return this == F16 || this == BF16 || this == F32 || this == F64;
  }

  /** Whether this is an unsigned integer type (U8, U32, U64). */
  public boolean isUnsigned() {
    return this == U8 || this == U32 || this == U64;
  }
}
