package dev.commplan.processor.diag;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import javax.annotation.processing.Messager;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.Element;

/**
 * Prints {@link Message}s through the compiler's {@link Messager}: collected while a round is processed,
 * then printed in source order ({@link SourceOrder}), as the compiler's own errors are, each located as
 * precisely as the compiler can place it ({@link Placement}).
 */
public final class DiagnosticPrinter {
  private final Messager messager;
  private final Placement placement;
  private final SourceOrder order;
  private final List<ValidationReport.Item> pending = new ArrayList<>();

  public DiagnosticPrinter(Messager messager, Placement placement, SourceOrder order) {
    this.messager = messager;
    this.placement = placement;
    this.order = order;
  }

  /** Adds every item of the report, to be printed once by {@link #flush}. */
  public void print(ValidationReport report) {
    pending.addAll(report.items());
  }

  /** Adds one message on {@code element}, at {@code value} of {@code mirror} where given, to be printed by {@link #flush}. */
  public void print(Message message, Element element, AnnotationMirror mirror, AnnotationValue value, Object... args) {
    pending.add(
        new ValidationReport.Item(message, element, mirror, mirror == null ? null : value, null, List.of(args)));
  }

  /**
   * Prints what was added since the last flush, in source order; {@code roots} are the round's root
   * elements (see {@link SourceOrder#sort}).
   */
  public void flush(Collection<? extends Element> roots) {
    List<ValidationReport.Item> items = List.copyOf(pending);
    pending.clear();
    List<ValidationReport.Item> sorted;
    try {
      sorted = order.sort(items, i -> new SourceOrder.Site(i.element(), i.mirror(), i.value()), roots);
    } catch (RuntimeException e) {
      sorted = items; // the order is a courtesy; the diagnostics are what matters
    }
    for (ValidationReport.Item item : sorted) {
      emit(item);
    }
  }

  private void emit(ValidationReport.Item item) {
    String text = item.text();
    Placement.Target at = placement.place(item.element(), item.mirror(), item.value(), item.attribute());
    if (at.mirror() != null && at.value() != null) {
      messager.printMessage(item.message().kind(), text, at.element(), at.mirror(), at.value());
    } else if (at.mirror() != null) {
      messager.printMessage(item.message().kind(), text, at.element(), at.mirror());
    } else {
      messager.printMessage(item.message().kind(), text, at.element());
    }
  }
}
