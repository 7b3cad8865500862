package dev.commplan.processor.parse;

import dev.commplan.model.Collective;
import javax.lang.model.element.AnnotationMirror;

/**
 * A collective annotation on a field, as written.
 *
 * @param kind which one
 * @param field the annotated field's name (the send buffer)
 * @param mirror the annotation
 * @param into {@code into}
 * @param step {@code step}
 * @param op {@code op}'s constant name, for AllReduce and ReduceScatter; otherwise null
 * @param root {@code root}, for Broadcast; otherwise null
 */
public record ParsedCollective(
    Collective kind,
    String field,
    AnnotationMirror mirror,
    Attr<String> into,
    Attr<Integer> step,
    Attr<String> op,
    Attr<Integer> root) {

  /** Whether {@code into} is empty: the collective works in place. */
  public boolean inPlace() {
    return into.value().isEmpty();
  }

  /**
   * The receive buffer as named: {@code into}, or the field itself in place. {@link FieldIndex#find}
   * finds the field it names.
   */
  public String recv() {
    return inPlace() ? field : into.value();
  }

  /** {@code @AllGather on 'part'}, for messages. */
  public String describe() {
    return "@" + kind.annotation() + " on '" + field + "'";
  }
}
