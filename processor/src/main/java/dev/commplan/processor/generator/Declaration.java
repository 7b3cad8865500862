package dev.commplan.processor.generator;

import dev.commplan.processor.model.CollectiveSpec;

/** What build declares to the PlanBuilder, in order: the dims' checks, the buffers, the collectives. */
sealed interface Declaration {
  /** The check of dim {@code dim} (its index in the plan's dims). */
  record DimCheck(int dim) implements Declaration {}

  /** The declaration of buffer {@code buffer} (its index in the plan's buffers). */
  record BufferDeclaration(int buffer) implements Declaration {}

  /** The declaration of one collective. */
  record CollectiveDeclaration(CollectiveSpec collective) implements Declaration {}
}
