package dev.commplan.processor.parse;

import dev.commplan.processor.shape.ShapeText;
import dev.commplan.processor.shape.Monomial;
import dev.commplan.processor.shape.ShapeEntry;
import java.util.List;
import javax.lang.model.element.AnnotationMirror;
import javax.lang.model.element.AnnotationValue;

/**
 * A field's {@code @Shape}, as written, each entry parsed.
 *
 * @param mirror the annotation
 * @param source its {@code value} attribute
 * @param entries one per entry
 */
public record ParsedShape(AnnotationMirror mirror, AnnotationValue source, List<Entry> entries) {
  public ParsedShape {
    entries = List.copyOf(entries);
  }

  /** The entries' text as written. */
  public List<String> texts() {
    return entries.stream().map(Entry::text).toList();
  }

  /** The element count: the product of all entries. Only for a shape whose entries all parsed. */
  public Monomial count() {
    Monomial m = Monomial.ONE;
    for (Entry e : entries) {
      if (!(e.parsed() instanceof ShapeEntry.Valid valid)) {
        throw new IllegalStateException("entry \"" + e.text() + "\" did not parse");
      }
      m = m.times(valid.count());
    }
    return m;
  }

  /** {@code {"4", "hidden"}}. */
  public String asWritten() {
    return ShapeText.braces(texts());
  }

  /**
   * One entry.
   *
   * @param text as written
   * @param source the array element, for locating diagnostics
   * @param parsed the parse
   */
  public record Entry(String text, AnnotationValue source, ShapeEntry parsed) {}
}
