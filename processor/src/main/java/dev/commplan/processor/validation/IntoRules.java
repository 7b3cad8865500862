package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.lang.model.element.AnnotationMirror;

/**
 * Rules 4 and 5, and AllToAll's need of an {@code into} (15): the receive buffer that {@code into} names
 * exists, is another buffer field with a {@code @Shape} (rule 7), and has the send buffer's data type.
 */
final class IntoRules {
  private final PlanContext cx;
  private final ShapeSuggestions suggest;
  /** Receive fields whose missing {@code @Shape} was reported, so that it is reported once. */
  private final Set<String> missingShapeReported = new HashSet<>();

  IntoRules(PlanContext cx, ShapeSuggestions suggest) {
    this.cx = cx;
    this.suggest = suggest;
  }

  /** Reports an in-place collective that has no in-place form (AllToAll without {@code into}). */
  void missingInto(ParsedField f, ParsedCollective c) {
    String type = f.isBuffer() ? f.bufferType().bufferSimpleName() : "buffer";
    String shape = f.shape() == null ? "{\"ranks\", \"1024\"}" : f.shape().asWritten();
    cx.report.add(Message.MISSING_INTO, f.element(), c.mirror(), c.into().source(), c.describe(), c.into().value(),
        c.kind().annotation(), f.name(), type, shape);
  }

  /**
   * The buffer field that {@code c}'s {@code into} names, or null when there is none usable (reported).
   * A target without a {@code @Shape}, or of another data type, is returned, and reported.
   */
  ParsedField receiveBuffer(ParsedField f, ParsedCollective c) {
    String into = c.into().value();
    AnnotationMirror m = c.mirror();
    if (into.equals(f.name()) || cx.byName.find(into).map(t -> t.name().equals(f.name())).orElse(false)) {
      cx.report.add(Message.INTO_SELF, f.element(), m, c.into().source(), c.describe(), Identifiers.visible(into));
      return null;
    }
    ParsedField target = cx.byName.find(into).orElse(null);
    if (target == null) {
      List<String> buffers = cx.plan.fields().stream()
          .filter(x -> x.isBuffer() && !x.name().equals(f.name()))
          .map(ParsedField::name)
          .toList();
      String near = JavaNames.closest(into, buffers);
      cx.report.add(Message.UNKNOWN_INTO, f.element(), m, c.into().source(), c.describe(), Identifiers.visible(into),
          cx.plan.simpleName(), Identifiers.visible(into),
          near == null ? "" : " (did you mean '" + near + "'?)",
          buffers.isEmpty() ? "it has none; declare one with @Shape" : PlanContext.quotedSingle(buffers));
      return null;
    }
    into = target.name();
    if (!target.isBuffer()) {
      cx.report.add(Message.INTO_NOT_BUFFER, f.element(), m, c.into().source(), c.describe(),
          Identifiers.visible(c.into().value()), into,
          target.typeText(), into, f.isBuffer() ? f.bufferType().bufferSimpleName() : "a buffer type");
      return null;
    }
    if (target.shape() == null && missingShapeReported.add(into)) {
      cx.report.add(Message.MISSING_RECV_SHAPE, target.element(), into, c.describe(),
          "@Shape(" + suggest.recvShape(f, c) + ")", into);
    }
    if (f.isBuffer() && target.bufferType() != f.bufferType()) {
      cx.report.add(Message.TYPE_MISMATCH, f.element(), m, c.into().source(), c.describe(),
          f.bufferType().bufferSimpleName(), c.kind().intoVerb(), into, target.bufferType().bufferSimpleName(), into,
          f.bufferType().bufferSimpleName(), f.name(), target.bufferType().bufferSimpleName());
    }
    return target;
  }
}
