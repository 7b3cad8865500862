package dev.commplan.processor.model;

import dev.commplan.model.ElementType;
import dev.commplan.processor.shape.Monomial;
import dev.commplan.processor.shape.ShapeText;
import java.util.List;

/**
 * One buffer field of a plan.
 *
 * @param field the field's name
 * @param type its buffer type (the data type)
 * @param count its element count, the product of its shape entries ({@code ranks} kept symbolic)
 * @param shape the {@code @Shape} entries as written
 * @param accessor the generated plan's accessor method
 * @param bindMethod the Builder's method that binds a user-owned buffer
 * @param fieldConstant its constant in the generated {@code enum Field} of a bucketed plan; null where the
 *     plan has no buckets or no collective sends the field
 */
public record BufferSpec(
    String field, ElementType type, Monomial count, List<String> shape, String accessor, String bindMethod,
    String fieldConstant) {

  public BufferSpec {
    shape = List.copyOf(shape);
  }

  /** Whether it has a constant in the generated {@code enum Field}: the plan is bucketed and a collective sends it. */
  public boolean hasFieldConstant() {
    return fieldConstant != null;
  }

  /** The shape as written, in annotation syntax: {@code {"4", "hidden"}}. */
  public String shapeAsWritten() {
    return ShapeText.braces(shape);
  }
}
