package dev.commplan.processor.parse;

import dev.commplan.model.ElementType;
import java.util.List;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.VariableElement;

/**
 * A field of a plan class as written.
 *
 * @param element the field
 * @param name its name
 * @param isPrivate whether it is private
 * @param typeText its type as written in messages
 * @param bufferType its buffer type, or null when it is not one of the buffer types
 * @param shape its {@code @Shape}, or null
 * @param collectives its collective annotations in source order
 */
public record ParsedField(
    VariableElement element,
    String name,
    boolean isPrivate,
    String typeText,
    ElementType bufferType,
    ParsedShape shape,
    List<ParsedCollective> collectives) {

  public ParsedField {
    collectives = List.copyOf(collectives);
  }

  /** Whether it carries {@code @Shape} or a collective: it is part of the plan. */
  public boolean annotated() {
    return shape != null || !collectives.isEmpty();
  }

  /** Whether its type is one of the buffer types. */
  public boolean isBuffer() {
    return bufferType != null;
  }

  /** The first of its annotations of ours, to point diagnostics about the whole field at; null if none. */
  public AnnotationMirror firstMirror() {
    if (!collectives.isEmpty()) {
      return collectives.getFirst().mirror();
    }
    return shape == null ? null : shape.mirror();
  }
}
