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
 */
public record BufferSpec(
    String field, ElementType type, Monomial count, List<String> shape, String accessor, String bindMethod) {

  public BufferSpec {
    shape = List.copyOf(shape);
  }

  /** The shape as written, in annotation syntax: {@code {"4", "hidden"}}. */
  public String shapeAsWritten() {
    return ShapeText.braces(shape);
  }
}
