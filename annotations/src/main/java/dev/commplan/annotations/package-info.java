/**
 * The CommPlan DSL. Annotate the buffer fields of a class with a collective and a {@link
 * dev.commplan.annotations.Shape}, annotate the class with {@link dev.commplan.annotations.CommPlan}, and
 * the annotation processor generates a checked, typed plan class. See docs/dsl.md.
 */
package dev.commplan.annotations;
