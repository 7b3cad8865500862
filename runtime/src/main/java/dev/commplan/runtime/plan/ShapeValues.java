package dev.commplan.runtime.plan;

import dev.commplan.runtime.DataType;
import dev.commplan.runtime.PlanBuildException;
import java.math.BigInteger;

/** The values generated builders compute a plan's shapes from: dims, checked, and exact element counts. */
final class ShapeValues {
  private ShapeValues() {}

  /** {@link PlanBuilder#requireDim}. */
  static long requireDim(String name, long value, boolean set) {
    if (!set) {
      throw new PlanBuildException(
          "dimension '" + name + "' is not set: call " + name + "(long) on the plan's builder before build");
    }
    if (value <= 0) {
      throw new PlanBuildException(
          "dimension '" + name + "' must be > 0, was " + value + ": call " + name + "(long) with a positive value");
    }
    return value;
  }

  /** {@link PlanBuilder#count}. */
  static long count(String field, String shapeAsWritten, long... factors) {
    long count = 1;
    for (long factor : factors) {
      if (factor <= 0) {
        throw new PlanBuildException("field '" + field + "' @Shape(" + shapeAsWritten + "): a factor is " + factor
            + ", but every factor of a shape is > 0 (literals are checked by the processor, dims when they are"
            + " set); pass the dims' values, each > 0");
      }
      try {
        count = Math.multiplyExact(count, factor);
      } catch (ArithmeticException overflow) {
        BigInteger exact = BigInteger.ONE;
        StringBuilder product = new StringBuilder();
        for (long f : factors) {
          exact = exact.multiply(BigInteger.valueOf(f));
          product.append(product.isEmpty() ? "" : " × ").append(f);
        }
        throw new PlanBuildException("field '" + field + "' @Shape(" + shapeAsWritten + "): " + product + " = " + exact
            + " elements does not fit in a long (at most " + Long.MAX_VALUE + "); use smaller dims");
      }
    }
    return count;
  }

  /** A buffer field's count: at least one element, and its bytes countable in a {@code long}. */
  static void checkBufferCount(String planName, String field, DataType type, long count, String shapeAsWritten) {
    if (count <= 0) {
      throw new PlanBuildException(
          "plan " + planName + ": field '" + field + "' has shape " + shapeAsWritten + " = " + count
              + " elements; every buffer needs at least one element");
    }
    if (count > Long.MAX_VALUE / type.byteSize()) {
      throw new PlanBuildException("plan " + planName + ": field '" + field + "' has shape " + shapeAsWritten + " = "
          + count + " elements of " + type + ", " + BigInteger.valueOf(count)
              .multiply(BigInteger.valueOf(type.byteSize())) + " bytes, more than a long can count ("
          + Long.MAX_VALUE + "); use smaller dims");
    }
  }
}
