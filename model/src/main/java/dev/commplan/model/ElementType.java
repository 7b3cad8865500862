package dev.commplan.model;

/**
 * The element types a buffer can hold, each the NCCL data type of the same name, with what the processor
 * and the runtime both need to know about it: its buffer class, its NCCL type, its size and its kind. The
 * runtime's public {@code DataType} has one constant of the same name for each and reads its facts here;
 * the processor reads a buffer field's type from its class name. Declared in the runtime's {@code
 * DataType} order, which recorded calls store as ordinals.
 */
public enum ElementType {
  /** IEEE 754 binary16. */
  F16(2, Kind.FLOAT, "ncclFloat16"),
  /** bfloat16. */
  BF16(2, Kind.FLOAT, "ncclBfloat16"),
  /** IEEE 754 binary32. */
  F32(4, Kind.FLOAT, "ncclFloat32"),
  /** IEEE 754 binary64. */
  F64(8, Kind.FLOAT, "ncclFloat64"),
  /** Signed 8-bit integer. */
  I8(1, Kind.SIGNED, "ncclInt8"),
  /** Unsigned 8-bit integer. */
  U8(1, Kind.UNSIGNED, "ncclUint8"),
  /** Signed 32-bit integer. */
  I32(4, Kind.SIGNED, "ncclInt32"),
  /** Unsigned 32-bit integer. */
  U32(4, Kind.UNSIGNED, "ncclUint32"),
  /** Signed 64-bit integer. */
  I64(8, Kind.SIGNED, "ncclInt64"),
  /** Unsigned 64-bit integer. */
  U64(8, Kind.UNSIGNED, "ncclUint64"),
  /** 8-bit float, 4 exponent and 3 mantissa bits, no infinities (NCCL 2.24 and later). */
  F8E4M3(1, Kind.FLOAT, "ncclFloat8e4m3"),
  /** 8-bit float, 5 exponent and 2 mantissa bits, IEEE-like (NCCL 2.24 and later). */
  F8E5M2(1, Kind.FLOAT, "ncclFloat8e5m2");

  /** The package of the buffer classes, {@code dev.commplan.runtime}. */
  public static final String BUFFER_PACKAGE = "dev.commplan.runtime";

  private enum Kind { FLOAT, SIGNED, UNSIGNED }

  private final int byteSize;
  private final Kind kind;
  private final String ncclType;

  ElementType(int byteSize, Kind kind, String ncclType) {
    this.byteSize = byteSize;
    this.kind = kind;
    this.ncclType = ncclType;
  }

  /** {@return bytes per element} */
  public int byteSize() {
    return byteSize;
  }

  /** {@return whether this is a floating-point type (F16, BF16, F32, F64, F8E4M3, F8E5M2)} */
  public boolean isFloatingPoint() {
    return kind == Kind.FLOAT;
  }

  /** {@return whether this is one of the 8-bit floating-point types (F8E4M3, F8E5M2)} */
  public boolean isFloat8() {
    return kind == Kind.FLOAT && byteSize == 1;
  }

  /** {@return whether this is an unsigned integer type (U8, U32, U64)} */
  public boolean isUnsigned() {
    return kind == Kind.UNSIGNED;
  }

  /** {@return NCCL's name of the type ({@code ncclDataType_t} in nccl.h), such as {@code ncclFloat32}} */
  public String ncclType() {
    return ncclType;
  }

  /** {@return the simple name of the buffer class that holds it, such as {@code F32Buffer}} */
  public String bufferSimpleName() {
    return name() + "Buffer";
  }

  /** {@return the qualified name of the buffer class that holds it, such as {@code dev.commplan.runtime.F32Buffer}} */
  public String bufferClassName() {
    return BUFFER_PACKAGE + "." + bufferSimpleName();
  }

  /**
   * The element type whose buffer class has this qualified name, or null.
   *
   * @param qualifiedName a class's qualified name, as the processor sees a field's type
   * @return the element type, or null if it is no buffer class
   */
  public static ElementType forBufferClassName(String qualifiedName) {
    for (ElementType t : values()) {
      if (t.bufferClassName().equals(qualifiedName)) {
        return t;
      }
    }
    return null;
  }
}
