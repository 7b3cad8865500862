package dev.commplan.processor.diag;

import java.util.ArrayList;
import java.util.List;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;
import javax.lang.model.element.Element;
import javax.tools.Diagnostic;

/**
 * What validating one plan found: a value, printed once by {@link DiagnosticPrinter}. A plan with an
 * error in its report is not generated; the other plans are.
 */
public record ValidationReport(List<Item> items) {
  public ValidationReport {
    items = List.copyOf(items);
  }

  /**
   * One diagnostic.
   *
   * @param message which
   * @param element where
   * @param mirror the annotation on {@code element}, or null
   * @param value the attribute of {@code mirror}, or one entry of an array-valued attribute; or null
   * @param attribute where {@code value} is an entry, the attribute that holds it, as written; else null
   *     (a compiler that places no entries places that attribute, {@link Placement})
   * @param args the message's arguments
   */
  public record Item(
      Message message, Element element, AnnotationMirror mirror, AnnotationValue value, AnnotationValue attribute,
      List<Object> args) {
    public Item {
      args = List.copyOf(args);
    }

    /** The text as printed. */
    public String text() {
      return message.render(args.toArray());
    }
  }

  /** Whether no item is an error: the plan may be generated. */
  public boolean isClean() {
    return items.stream().noneMatch(i -> i.message().kind() == Diagnostic.Kind.ERROR);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Collects items in the order found. */
  public static final class Builder {
    private final List<Item> items = new ArrayList<>();

    private Builder() {}

    /** Adds an item on {@code element}, located at {@code value} of {@code mirror} where those are given. */
    public Builder add(Message message, Element element, AnnotationMirror mirror, AnnotationValue value, Object... args) {
      items.add(new Item(message, element, mirror, mirror == null ? null : value, null, List.of(args)));
      return this;
    }

    /**
     * Adds an item located at {@code entry}, one entry of {@code mirror}'s array-valued {@code attribute}
     * as written: the attribute, not the entry's text, says which attribute it is in (two attributes may
     * hold equal entries: {@code dims = {"tp"}, axes = {"tp"}}).
     */
    public Builder addOnEntry(Message message, Element element, AnnotationMirror mirror, AnnotationValue entry,
        AnnotationValue attribute, Object... args) {
      items.add(new Item(message, element, mirror, entry, attribute, List.of(args)));
      return this;
    }

    /** Adds an item on the whole element. */
    public Builder add(Message message, Element element, Object... args) {
      return add(message, element, null, null, args);
    }

    public boolean hasErrors() {
      return !build().isClean();
    }

    public ValidationReport build() {
      return new ValidationReport(items);
    }
  }
}
