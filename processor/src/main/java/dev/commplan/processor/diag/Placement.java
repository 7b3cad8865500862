package dev.commplan.processor.diag;

import java.util.List;
import java.util.Map;
import javax.annotation.processing.ProcessingEnvironment;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.Element;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.ExecutableElement;

/**
 * Where a diagnostic is handed to the compiler's {@code Messager}: the element, annotation and value the
 * processor found, or, where the compiler cannot place those, the nearest ones it can.
 *
 * <p>javac places every element, annotation and annotation value, array entries included. ecj (Eclipse's
 * compiler, 3.44; {@code BaseMessagerImpl.createProblem}) places classes, interfaces, enums, annotation
 * types, methods, constructors and fields, but
 *
 * <ul>
 *   <li>not a record, an enum constant, a record component, or a record's fields: the diagnostic gets no
 *       file and no line (ecj's batch compiler prints it bare; Eclipse only logs it). It goes on the nearest
 *       enclosing element ecj places instead, when there is one;
 *   <li>not an entry of an array-valued attribute ({@code @Shape({"n", "m+1"})}): only an attribute's
 *       whole value, as {@code AnnotationMirror.getElementValues()} gives it, is found in the source; for
 *       an entry it falls back to the annotation's first line. The entry is replaced by its attribute, which
 *       starts on the entry's line whenever the entries start on the line of the opening brace: the one
 *       the diagnostic names where it does, else the one that holds an equal entry.
 * </ul>
 */
public interface Placement {
  /** Where a diagnostic goes. */
  record Target(Element element, AnnotationMirror mirror, AnnotationValue value) {}

  /**
   * The target for a diagnostic found at {@code element}, {@code mirror} and {@code value} (null where
   * absent); {@code attribute}, where not null, is the array-valued attribute of which {@code value} is an
   * entry.
   */
  Target place(Element element, AnnotationMirror mirror, AnnotationValue value, AnnotationValue attribute);

  /**
   * The placement for the compiler that runs the processor: ecj's where its environment or its Messager
   * is Eclipse's (the Messager too, since tools wrap the environment, as Gradle does, but pass the
   * Messager through).
   */
  static Placement forEnvironment(ProcessingEnvironment env) {
    return isEclipse(env) || isEclipse(env.getMessager()) ? ECLIPSE : AS_FOUND;
  }

  private static boolean isEclipse(Object o) {
    return o != null && o.getClass().getName().startsWith("org.eclipse.jdt.");
  }

  /** Everything where it was found (javac, and any compiler that places all of it). */
  Placement AS_FOUND = (element, mirror, value, attribute) -> new Target(element, mirror, value);

  /** ecj's limits, as above. */
  Placement ECLIPSE = (element, mirror, value, attribute) -> {
    if (!Eclipse.placeable(element)) {
      for (Element e = element.getEnclosingElement(); e != null; e = e.getEnclosingElement()) {
        if (Eclipse.placeable(e)) {
          return new Target(e, null, null);
        }
      }
      return new Target(element, mirror, value);
    }
    if (mirror == null || value == null) {
      return new Target(element, mirror, value);
    }
    return new Target(element, mirror, attribute != null ? attribute : Eclipse.attributeOf(mirror, value));
  };

  /** What ecj can place. */
  final class Eclipse {
    private Eclipse() {}

    static boolean placeable(Element e) {
      Element owner = e.getEnclosingElement();
      boolean inRecord = owner != null && owner.getKind() == ElementKind.RECORD;
      return switch (e.getKind()) {
        case CLASS, INTERFACE, ENUM, ANNOTATION_TYPE, MODULE -> true;
        case FIELD, METHOD, CONSTRUCTOR -> !inRecord; // a record's fields and implicit members have no source
        default -> false;
      };
    }

    /**
     * {@code value} itself if it is one of the mirror's attributes, else the first array-valued attribute
     * that holds it. ecj makes new value objects on every call, equal by value, so they are compared with
     * {@code equals}: an entry equal to another attribute's is found there, so a diagnostic on an entry
     * of a mirror that can have such entries names its attribute ({@link
     * ValidationReport.Builder#addOnEntry}).
     */
    static AnnotationValue attributeOf(AnnotationMirror mirror, AnnotationValue value) {
      Map<? extends ExecutableElement, ? extends AnnotationValue> attributes = mirror.getElementValues();
      if (attributes.containsValue(value)) {
        return value;
      }
      for (AnnotationValue attribute : attributes.values()) {
        if (attribute.getValue() instanceof List<?> entries && entries.contains(value)) {
          return attribute;
        }
      }
      return value;
    }
  }
}
