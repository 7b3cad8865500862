package dev.commplan.processor.parse;

import javax.lang.model.element.AnnotationValue;

/**
 * An annotation attribute's value, with the value as written in source for locating diagnostics.
 *
 * @param value the value, the default where the attribute is not written
 * @param source the attribute as written, or null where the default applies
 */
public record Attr<T>(T value, AnnotationValue source) {}
