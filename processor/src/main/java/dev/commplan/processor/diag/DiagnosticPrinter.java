package dev.commplan.processor.diag;

import javax.annotation.processing.Messager;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.Element;

/**
 * Prints {@link Message}s through the compiler's {@link Messager}, located as precisely as the compiler
 * can place them ({@link Placement}).
 */
public final class DiagnosticPrinter {
  private final Messager messager;
  private final Placement placement;

  public DiagnosticPrinter(Messager messager, Placement placement) {
    this.messager = messager;
    this.placement = placement;
  }

  /** Prints every item of the report, once. */
  public void print(ValidationReport report) {
    for (ValidationReport.Item item : report.items()) {
      print(item.message(), item.element(), item.mirror(), item.value(), item.args().toArray());
    }
  }

  /** Prints one message on {@code element}, at {@code value} of {@code mirror} where given. */
  public void print(Message message, Element element, AnnotationMirror mirror, AnnotationValue value, Object... args) {
    String text = message.render(args);
    Placement.Target at = placement.place(element, mirror, value);
    if (at.mirror() != null && at.value() != null) {
      messager.printMessage(message.kind(), text, at.element(), at.mirror(), at.value());
    } else if (at.mirror() != null) {
      messager.printMessage(message.kind(), text, at.element(), at.mirror());
    } else {
      messager.printMessage(message.kind(), text, at.element());
    }
  }
}
