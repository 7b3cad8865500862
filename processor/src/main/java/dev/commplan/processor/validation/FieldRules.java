package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.model.ElementType;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import java.util.Arrays;
import java.util.stream.Collectors;
import javax.lang.model.element.AnnotationMirror;

/** Rules 6, 7 and 13 for each annotated field: not private, of a buffer type, with a {@code @Shape}. */
final class FieldRules {
  /** "F16Buffer, BF16Buffer, ..." for messages. */
  private static final String BUFFER_CLASSES =
      Arrays.stream(ElementType.values()).map(ElementType::bufferSimpleName).collect(Collectors.joining(", "));

  private final PlanContext cx;
  private final ShapeSuggestions suggest;

  FieldRules(PlanContext cx, ShapeSuggestions suggest) {
    this.cx = cx;
    this.suggest = suggest;
  }

  void checkField(ParsedField f) {
    AnnotationMirror first = f.firstMirror();
    String firstName = PlanContext.simpleName(first);
    if (f.isPrivate()) {
      cx.report.add(Message.PRIVATE_FIELD, f.element(), first, null, f.name(), firstName, f.name());
    }
    if (!f.isBuffer()) {
      cx.report.add(Message.NOT_A_BUFFER, f.element(), first, null, f.name(), firstName, f.typeText(), f.name(),
          BUFFER_CLASSES);
    }
    if (f.shape() == null && !f.collectives().isEmpty()) {
      ParsedCollective c = f.collectives().getFirst();
      if (c.oneBuffer()) {
        cx.report.add(Message.MISSING_PEER_SHAPE, f.element(), c.mirror(), null, f.name(), c.kind().annotation(),
            "@Shape(" + suggest.peerShape(f, c) + ")", f.name());
      } else {
        cx.report.add(Message.MISSING_SHAPE, f.element(), c.mirror(), null, f.name(), c.kind().annotation(),
            "@Shape(" + suggest.sendShape(c) + ")", f.name());
      }
    }
  }
}
