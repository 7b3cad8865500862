package dev.commplan.processor.parse;

import dev.commplan.model.Collective;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.Element;
import javax.lang.model.element.ExecutableElement;
import javax.lang.model.element.TypeElement;
import javax.lang.model.element.VariableElement;
import javax.lang.model.util.Elements;

/** Reads annotation mirrors without loading the annotation classes (they may not be on the processor path). */
public final class Annotations {
  public static final String COMM_PLAN = "dev.commplan.annotations.CommPlan";
  public static final String SHAPE = "dev.commplan.annotations.Shape";

  /** The annotations the processor supports: {@code @CommPlan}, every collective's (the model's list), {@code @Shape}. */
  public static final List<String> ALL = all();

  private static List<String> all() {
    List<String> all = new ArrayList<>();
    all.add(COMM_PLAN);
    for (Collective c : Collective.values()) {
      all.add(c.annotationName());
    }
    all.add(SHAPE);
    return List.copyOf(all);
  }

  private Annotations() {}

  /** The qualified name of the mirror's annotation type. */
  public static String nameOf(AnnotationMirror mirror) {
    Element e = mirror.getAnnotationType().asElement();
    return e instanceof TypeElement t ? t.getQualifiedName().toString() : mirror.getAnnotationType().toString();
  }

  /** The element's annotation of that qualified name, or null. */
  public static AnnotationMirror find(Element element, String qualifiedName) {
    for (AnnotationMirror m : element.getAnnotationMirrors()) {
      if (nameOf(m).equals(qualifiedName)) {
        return m;
      }
    }
    return null;
  }

  /** The attribute as written, or null when the default applies. */
  static AnnotationValue explicit(AnnotationMirror mirror, String attribute) {
    for (Map.Entry<? extends ExecutableElement, ? extends AnnotationValue> e : mirror.getElementValues().entrySet()) {
      if (e.getKey().getSimpleName().contentEquals(attribute)) {
        return e.getValue();
      }
    }
    return null;
  }

  /** The attribute's value, its default where not written. */
  static Object value(Elements elements, AnnotationMirror mirror, String attribute) {
    for (Map.Entry<? extends ExecutableElement, ? extends AnnotationValue> e
        : elements.getElementValuesWithDefaults(mirror).entrySet()) {
      if (e.getKey().getSimpleName().contentEquals(attribute)) {
        return e.getValue().getValue();
      }
    }
    throw new Missing("@" + mirror.getAnnotationType() + " has no attribute '" + attribute + "'");
  }

  /** How javac presents an attribute it could not resolve (an {@code Attribute.Error}). */
  private static final String ERROR = "<error>";

  static Attr<String> string(Elements elements, AnnotationMirror mirror, String attribute) {
    Object v = value(elements, mirror, attribute);
    if (v instanceof String s && !s.equals(ERROR)) {
      return new Attr<>(s, explicit(mirror, attribute));
    }
    throw new Unreadable(attribute + " = " + v);
  }

  static Attr<Integer> integer(Elements elements, AnnotationMirror mirror, String attribute) {
    Object v = value(elements, mirror, attribute);
    if (v instanceof Integer i) {
      return new Attr<>(i, explicit(mirror, attribute));
    }
    throw new Unreadable(attribute + " = " + v);
  }

  static Attr<Long> longValue(Elements elements, AnnotationMirror mirror, String attribute) {
    Object v = value(elements, mirror, attribute);
    if (v instanceof Long l) {
      return new Attr<>(l, explicit(mirror, attribute));
    }
    throw new Unreadable(attribute + " = " + v);
  }

  static Attr<String> enumConstant(Elements elements, AnnotationMirror mirror, String attribute) {
    Object v = value(elements, mirror, attribute);
    if (v instanceof VariableElement constant) {
      return new Attr<>(constant.getSimpleName().toString(), explicit(mirror, attribute));
    }
    throw new Unreadable(attribute + " = " + v);
  }

  /** Whether the mirror's annotation type declares {@code attribute} (an older annotations jar may not). */
  static boolean declares(AnnotationMirror mirror, String attribute) {
    Element type = mirror.getAnnotationType().asElement();
    return type != null && type.getEnclosedElements().stream()
        .anyMatch(e -> e instanceof ExecutableElement && e.getSimpleName().contentEquals(attribute));
  }

  /**
   * A {@code String} attribute added after the first release ({@code over}): its default, {@code ""},
   * where the annotation type on the class path predates it.
   */
  static Attr<String> optionalString(Elements elements, AnnotationMirror mirror, String attribute) {
    return declares(mirror, attribute) ? string(elements, mirror, attribute) : new Attr<>("", null);
  }

  /** A {@code long} attribute added after the first release ({@code bucketBytes}): 0 where it is not declared. */
  static Attr<Long> optionalLong(Elements elements, AnnotationMirror mirror, String attribute) {
    return declares(mirror, attribute) ? longValue(elements, mirror, attribute) : new Attr<>(0L, null);
  }

  static Attr<Boolean> booleanValue(Elements elements, AnnotationMirror mirror, String attribute) {
    Object v = value(elements, mirror, attribute);
    if (v instanceof Boolean b) {
      return new Attr<>(b, explicit(mirror, attribute));
    }
    throw new Unreadable(attribute + " = " + v);
  }

  /** A {@code boolean} attribute added after the first release ({@code checkFinite}): false where it is not declared. */
  static Attr<Boolean> optionalBoolean(Elements elements, AnnotationMirror mirror, String attribute) {
    return declares(mirror, attribute) ? booleanValue(elements, mirror, attribute) : new Attr<>(false, null);
  }

  /** A {@code String[]} attribute added after the first release ({@code axes}); empty where it is not declared. */
  static List<Attr<String>> optionalStrings(Elements elements, AnnotationMirror mirror, String attribute) {
    return declares(mirror, attribute) ? strings(elements, mirror, attribute) : List.of();
  }

  /** A {@code String[]} attribute, one attribute per entry, each located at its array element. */
  static List<Attr<String>> strings(Elements elements, AnnotationMirror mirror, String attribute) {
    Object v = value(elements, mirror, attribute);
    AnnotationValue written = explicit(mirror, attribute);
    if (v instanceof String s && !s.equals(ERROR)) {
      return List.of(new Attr<>(s, written));
    }
    if (!(v instanceof List<?> list)) {
      throw new Unreadable(attribute + " = " + v);
    }
    return list.stream().map(o -> {
      if (o instanceof AnnotationValue av && av.getValue() instanceof String s && !s.equals(ERROR)) {
        return new Attr<>(s, written == null ? null : av);
      }
      throw new Unreadable(attribute + " has the entry " + o);
    }).toList();
  }

  /**
   * An attribute whose value the compiler could not resolve (it reports that error itself); the plan is
   * deferred to the next round.
   */
  static sealed class Unreadable extends RuntimeException permits Missing {
    private static final long serialVersionUID = 1L;

    Unreadable(String message) {
      super(message);
    }
  }

  /**
   * A required attribute that is not written ({@code @AllToAll} without {@code into}): the compiler
   * rejects the annotation itself (JLS 9.7.1), whatever the next round brings.
   */
  static final class Missing extends Unreadable {
    private static final long serialVersionUID = 1L;

    Missing(String message) {
      super(message);
    }
  }
}
