package dev.commplan.runtime;

import dev.commplan.model.ElementType;

/**
 * The element types a buffer can hold; each is the NCCL data type of the same name. Their facts (size,
 * kind) are the model's {@link ElementType} of the same name, which the processor reads too.
 */
public enum DataType {
  /** IEEE 754 binary16 ({@code ncclFloat16}). */
  F16,
  /** bfloat16 ({@code ncclBfloat16}). */
  BF16,
  /** IEEE 754 binary32 ({@code ncclFloat32}). */
  F32,
  /** IEEE 754 binary64 ({@code ncclFloat64}). */
  F64,
  /** signed 8-bit integer ({@code ncclInt8}). */
  I8,
  /** unsigned 8-bit integer ({@code ncclUint8}). */
  U8,
  /** signed 32-bit integer ({@code ncclInt32}). */
  I32,
  /** unsigned 32-bit integer ({@code ncclUint32}). */
  U32,
  /** signed 64-bit integer ({@code ncclInt64}). */
  I64,
  /** unsigned 64-bit integer ({@code ncclUint64}). */
  U64,
  /** 8-bit float, 4 exponent and 3 mantissa bits, no infinities ({@code ncclFloat8e4m3}, NCCL 2.24 and later). */
  F8E4M3,
  /** 8-bit float, 5 exponent and 2 mantissa bits, IEEE-like ({@code ncclFloat8e5m2}, NCCL 2.24 and later). */
  F8E5M2;

  private final ElementType element = ElementType.valueOf(name());

  /** {@return bytes per element} */
  public int byteSize() {
    return element.byteSize();
  }

  /** {@return whether this is a floating-point type (F16, BF16, F32, F64, F8E4M3, F8E5M2)} */
  public boolean isFloatingPoint() {
    return element.isFloatingPoint();
  }

  /** {@return whether this is one of the 8-bit floating-point types (F8E4M3, F8E5M2)} */
  public boolean isFloat8() {
    return element.isFloat8();
  }

  /** {@return whether this is an unsigned integer type (U8, U32, U64)} */
  public boolean isUnsigned() {
    return element.isUnsigned();
  }
}
