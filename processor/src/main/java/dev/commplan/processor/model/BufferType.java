package dev.commplan.processor.model;

import java.util.ArrayList;
import java.util.List;

/**
 * The buffer field types of {@code dev.commplan.runtime}, one per NCCL data type (the runtime's {@code
 * DataType}; {@code BufferTypeTest} holds the two lists together).
 */
public enum BufferType {
  F16, BF16, F32, F64, I8, U8, I32, U32, I64, U64, F8E4M3, F8E5M2;

  /** The runtime package the buffer classes live in. */
  public static final String PACKAGE = "dev.commplan.runtime";

  /** The {@code DataType} constant's name, such as {@code F32}. */
  public String dataType() {
    return name();
  }

  /** Whether it is one of the 8-bit floating-point types (F8E4M3, F8E5M2). */
  public boolean isFloat8() {
    return this == F8E4M3 || this == F8E5M2;
  }

  /** The buffer class's simple name, such as {@code F32Buffer}. */
  public String simpleName() {
    return name() + "Buffer";
  }

  /** The buffer class's qualified name. */
  public String qualifiedName() {
    return PACKAGE + "." + simpleName();
  }

  /** The type whose class has this qualified name, or null. */
  public static BufferType forQualifiedName(String qualifiedName) {
    for (BufferType t : values()) {
      if (t.qualifiedName().equals(qualifiedName)) {
        return t;
      }
    }
    return null;
  }

  /** "F16Buffer, BF16Buffer, ..." for messages. */
  public static String list() {
    List<String> names = new ArrayList<>();
    for (BufferType t : values()) {
      names.add(t.simpleName());
    }
    return String.join(", ", names);
  }
}
