package dev.commplan.processor.parse;

import dev.commplan.model.Collective;
import dev.commplan.processor.lang.Identifiers;
import java.util.List;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.ElementKind;
import javax.lang.model.element.NestingKind;
import javax.lang.model.element.TypeElement;

/**
 * A {@code @CommPlan} class as written: the parse layer, which keeps the elements, mirrors and values
 * that diagnostics point at. Nothing is checked yet.
 *
 * @param element the annotated type
 * @param mirror its {@code @CommPlan}
 * @param qualifiedName such as {@code p.Outer.Grads}
 * @param packageName such as {@code p}; {@code ""} for the unnamed package
 * @param simpleNames the enclosing types' simple names and its own, outermost first
 * @param kind class, interface, enum, record or annotation type
 * @param nesting top level, member, local or anonymous
 * @param isPrivate whether it is declared private
 * @param isStatic whether it is static (implicitly so inside interfaces)
 * @param name {@code @CommPlan(name)}
 * @param ranks {@code @CommPlan(ranks)}
 * @param dims {@code @CommPlan(dims)}, one attribute per entry
 * @param dimsSource {@code dims} as written, or null
 * @param axes {@code @CommPlan(axes)}, one attribute per entry
 * @param axesSource {@code axes} as written, or null
 * @param bucketBytes {@code @CommPlan(bucketBytes)}: 0 for a plan without buckets
 * @param checkFinite {@code @CommPlan(checkFinite)}: false where not written (or where the annotations jar predates it)
 * @param fields every field declared in the class, in declaration order
 */
public record ParsedPlan(
    TypeElement element,
    AnnotationMirror mirror,
    String qualifiedName,
    String packageName,
    List<String> simpleNames,
    ElementKind kind,
    NestingKind nesting,
    boolean isPrivate,
    boolean isStatic,
    Attr<String> name,
    Attr<Integer> ranks,
    List<Attr<String>> dims,
    AnnotationValue dimsSource,
    List<Attr<String>> axes,
    AnnotationValue axesSource,
    Attr<Long> bucketBytes,
    Attr<Boolean> checkFinite,
    List<ParsedField> fields) {

  public ParsedPlan {
    simpleNames = List.copyOf(simpleNames);
    dims = List.copyOf(dims);
    axes = List.copyOf(axes);
    fields = List.copyOf(fields);
  }

  /** Whether it is cut into buckets ({@code bucketBytes > 0}): its generated class has {@code enum Field}. */
  public boolean bucketed() {
    return bucketBytes.value() > 0;
  }

  /**
   * The fields a collective sends, in declaration order: those that carry a collective annotation other
   * than {@code @Recv} (the annotated field is the send buffer; a {@code @Recv}'s is only written, and no
   * bucket waits for it). A bucketed plan's generated {@code enum Field} has one constant for each.
   */
  public List<ParsedField> sentFields() {
    return fields.stream().filter(f -> f.collectives().stream().anyMatch(c -> c.kind() != Collective.RECV)).toList();
  }

  /** The class's simple name. */
  public String simpleName() {
    return simpleNames.getLast();
  }

  /**
   * The generated class's simple name: {@code name}, or the type's names joined by {@code _} and {@code
   * Plan}; as the compiler reads it ({@link Identifiers#canonical}).
   */
  public String generatedName() {
    return Identifiers.canonical(name.value().isEmpty() ? String.join("_", simpleNames) + "Plan" : name.value());
  }

  /** The dims' names, in declaration order, as the compiler reads them ({@link Identifiers#canonical}). */
  public List<String> dimNames() {
    return dims.stream().map(d -> Identifiers.canonical(d.value())).toList();
  }

  /** The axes' names, in declaration order, as the compiler reads them ({@link Identifiers#canonical}). */
  public List<String> axisNames() {
    return axes.stream().map(a -> Identifiers.canonical(a.value())).toList();
  }
}
