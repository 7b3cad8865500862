package dev.commplan.processor.parse;

import dev.commplan.model.Collective;
import dev.commplan.model.InPlace;
import dev.commplan.processor.lang.Identifiers;
import javax.lang.model.element.AnnotationMirror;

/**
 * A collective annotation on a field, as written.
 *
 * @param kind which one
 * @param field the annotated field's name (the send buffer; for {@code @Recv}, the buffer it fills)
 * @param mirror the annotation
 * @param into {@code into}; for Send and Recv, which have none, {@code ""} with no source
 * @param step {@code step}
 * @param op {@code op}'s constant name, where the collective takes one ({@link Collective#hasOp()}); otherwise null
 * @param root {@code root}, where it takes one ({@link Collective#hasRoot()}); otherwise null
 * @param peer {@code to} (Send) or {@code from} (Recv) as written; otherwise null
 * @param over {@code over}: {@code ""} for the plan's whole communicator, else an axis as written
 */
public record ParsedCollective(
    Collective kind,
    String field,
    AnnotationMirror mirror,
    Attr<String> into,
    Attr<Integer> step,
    Attr<String> op,
    Attr<Integer> root,
    Attr<String> peer,
    Attr<String> over) {

  /** Whether {@code into} is empty: the collective works in place (Send and Recv: on their one buffer). */
  public boolean inPlace() {
    return into.value().isEmpty();
  }

  /** Whether it has one buffer, the field itself, and no {@code into} at all (Send, Recv). */
  public boolean oneBuffer() {
    return kind.inPlace() == InPlace.ONE_BUFFER;
  }

  /**
   * The receive buffer as named: {@code into}, or the field itself in place. {@link FieldIndex#find}
   * finds the field it names.
   */
  public String recv() {
    return inPlace() ? field : into.value();
  }

  /** The axis it runs over as the compiler reads it ({@link Identifiers#canonical}), or {@code ""}. */
  public String axis() {
    return Identifiers.canonical(over.value());
  }

  /** {@code @AllGather on 'part'}, for messages. */
  public String describe() {
    return "@" + kind.annotation() + " on '" + field + "'";
  }
}
