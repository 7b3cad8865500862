package dev.commplan.processor.diag;

import javax.annotation.processing.Messager;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.Element;

/** Prints {@link Message}s through the compiler's {@link Messager}, located as precisely as known. */
public final class DiagnosticPrinter {
  private final Messager messager;

  public DiagnosticPrinter(Messager messager) {
    this.messager = messager;
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
    if (mirror != null && value != null) {
      messager.printMessage(message.kind(), text, element, mirror, value);
    } else if (mirror != null) {
      messager.printMessage(message.kind(), text, element, mirror);
    } else {
      messager.printMessage(message.kind(), text, element);
    }
  }
}
