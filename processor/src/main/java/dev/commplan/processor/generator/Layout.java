package dev.commplan.processor.generator;

import dev.commplan.processor.generator.Declaration.BufferDeclaration;
import dev.commplan.processor.generator.Declaration.CollectiveDeclaration;
import dev.commplan.processor.generator.Declaration.DimCheck;
import dev.commplan.processor.model.BufferSpec;
import dev.commplan.processor.model.CollectiveSpec;
import dev.commplan.processor.model.PlanModel;
import dev.commplan.processor.shape.Monomial;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the declarations go: {@code inline}, all in build (one part), when they, the rest of build and
 * its locals fit in {@link PlanGenerator.Limits#methodBytes}; otherwise in parts of at most that size
 * each.
 *
 * @param inline whether build declares everything itself
 * @param parts the declarations, in order, by part (one part when inline)
 */
record Layout(boolean inline, List<List<Declaration>> parts) {
  /** The layout of {@code plan}'s declarations within {@code limits}. */
  static Layout of(PlanModel plan, PlanGenerator.Limits limits) {
    List<Declaration> all = declarations(plan);
    List<BufferSpec> buffers = plan.buffers();
    // build's own statements, the handles' array, and over a mesh each axis's size; in a bucketed plan
    // also the bucket size, the communication stream and the field constants' handles
    long inline = 400 + 8L * buffers.size() + 20L * plan.axes().size();
    if (plan.bucketed()) {
      inline += 40 + 8L * plan.fieldConstants().size();
    }
    for (Declaration d : all) {
      inline += estimate(d, buffers) + 2; // a local's store may take a wide index
    }
    if (inline <= limits.methodBytes()) {
      return new Layout(true, List.of(all));
    }
    List<List<Declaration>> parts = new ArrayList<>();
    List<Declaration> part = new ArrayList<>();
    long size = 0;
    for (Declaration d : all) {
      int bytes = estimate(d, buffers);
      if (!part.isEmpty() && size + bytes > limits.methodBytes()) {
        parts.add(part);
        part = new ArrayList<>();
        size = 0;
      }
      part.add(d);
      size += bytes;
    }
    parts.add(part);
    return new Layout(false, parts);
  }

  private static List<Declaration> declarations(PlanModel plan) {
    List<Declaration> all = new ArrayList<>();
    for (int d = 0; d < plan.dims().size(); d++) {
      all.add(new DimCheck(d));
    }
    for (int b = 0; b < plan.buffers().size(); b++) {
      all.add(new BufferDeclaration(b));
    }
    for (CollectiveSpec c : plan.collectives()) {
      all.add(new CollectiveDeclaration(c));
    }
    return all;
  }

  /**
   * An upper bound of a declaration's bytecode in a part (array indexes up to 5 bytes, constants 3,
   * calls 3): a dim check 24; a buffer 44, plus for a count of several factors 16 and 12 per factor; a
   * collective 30, or 40 through {@code PlanBuilder.collective} (a Collective, an op or null, and a root);
   * over an axis, 4 more for its name (and every collective but Send and Recv through {@code collective}).
   * A buffer with a field constant (a bucketed plan's) 8 more in a part, which also stores its handle
   * among the field constants' ({@code h[i] = f[k] = ...}).
   */
  private static int estimate(Declaration d, List<BufferSpec> buffers) {
    return switch (d) {
      case DimCheck c -> 24;
      case BufferDeclaration b -> {
        BufferSpec buffer = buffers.get(b.buffer());
        int factors = factorCount(buffer.count());
        yield 44 + (factors > 1 ? 16 + 12 * factors : 0) + (buffer.hasFieldConstant() ? 8 : 0);
      }
      case CollectiveDeclaration c when !c.collective().over().isEmpty() ->
          c.collective().kind().pointToPoint() ? 34 : 44;
      case CollectiveDeclaration c -> switch (c.collective().kind()) {
        case ALL_REDUCE, BROADCAST, ALL_GATHER, REDUCE_SCATTER, SEND, RECV -> 30;
        case REDUCE, GATHER, SCATTER, ALL_TO_ALL -> 40;
      };
    };
  }

  /** How many factors the count is written with ({@link Monomial#factors}). */
  private static int factorCount(Monomial count) {
    return count.factors(String::compareTo).size();
  }
}
