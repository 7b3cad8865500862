package dev.commplan.processor.generator;

import static dev.commplan.processor.generator.GeneratedTypes.COLLECTIVE;
import static dev.commplan.processor.generator.GeneratedTypes.DATA_TYPE;
import static dev.commplan.processor.generator.GeneratedTypes.PLAN_BUILDER;
import static dev.commplan.processor.generator.GeneratedTypes.REDUCE_OP;

import com.palantir.javapoet.CodeBlock;
import dev.commplan.processor.generator.Declaration.BufferDeclaration;
import dev.commplan.processor.generator.Declaration.DimCheck;
import dev.commplan.processor.model.BufferSpec;
import dev.commplan.processor.model.CollectiveSpec;
import dev.commplan.processor.model.PlanModel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The code of each declaration, as build or a part writes it (see {@link Refs}). */
final class DeclarationCode {
  private final Generation g;

  DeclarationCode(Generation g) {
    this.g = g;
  }

  /**
   * How declarations name things: the PlanBuilder, the Builder ({@code this} in build, {@code s} in a
   * part), each symbol's value and each buffer's handle (locals in build, array elements in a part).
   */
  record Refs(String planBuilder, String source, Map<String, String> symbol, List<String> handle) {}

  CodeBlock dimCheck(DimCheck c, Refs in) {
    PlanModel.Dim d = g.plan.dims().get(c.dim());
    return CodeBlock.of("$T.requireDim($S, $L.$N, $L.$N)", PLAN_BUILDER, d.name(), in.source(),
        g.fields.dimValue().get(d.name()), in.source(), g.fields.dimSet().get(d.name()));
  }

  CodeBlock bufferDeclaration(BufferDeclaration d, Refs in) {
    BufferSpec b = g.buffers.get(d.buffer());
    return CodeBlock.of("$N.buffer($S,$W$T.$L,$W$L,$W$S,$W$L.$N[$L])", in.planBuilder(), b.field(), DATA_TYPE,
        b.type().name(), count(b, in.symbol()), b.shapeAsWritten(), in.source(), g.fields.bound(), d.buffer());
  }

  /**
   * The PlanBuilder call that declares {@code c}: the four first collectives by their own methods
   * ({@code b.allReduce(0, w, w, ReduceOp.SUM)}), the others through {@code b.collective(step,
   * Collective.REDUCE, send, recv, op, root)} (op null and root -1 where they take none), and Send and
   * Recv with their peer in canonical form ({@code b.send(0, act, "rank + 1")}); over an axis, {@link
   * #overAxis}.
   */
  CodeBlock collective(CollectiveSpec c, Refs in) {
    String send = in.handle().get(g.index.get(c.send()));
    String recv = in.handle().get(g.index.get(c.recv()));
    if (!c.over().isEmpty()) {
      return overAxis(c, in, send, recv);
    }
    return switch (c.kind()) {
      case ALL_REDUCE, BROADCAST, ALL_GATHER, REDUCE_SCATTER -> {
        CodeBlock.Builder call = CodeBlock.builder()
            .add("$N.$L($L, $L, $L", in.planBuilder(), c.kind().methodName(), c.step(), send, recv);
        if (c.kind().hasOp()) {
          call.add(", $T.$L", REDUCE_OP, c.op());
        }
        if (c.kind().hasRoot()) {
          call.add(", $L", c.root());
        }
        yield call.add(")").build();
      }
      case REDUCE, GATHER, SCATTER, ALL_TO_ALL -> CodeBlock.of("$N.collective($L, $T.$L, $L, $L, $L, $L)",
          in.planBuilder(), c.step(), COLLECTIVE, c.kind().name(), send, recv,
          c.kind().hasOp() ? CodeBlock.of("$T.$L", REDUCE_OP, c.op()) : CodeBlock.of("null"),
          c.kind().hasRoot() ? c.root() : -1);
      case SEND, RECV -> CodeBlock.of("$N.$L($L, $L, $S)", in.planBuilder(), c.kind().methodName(), c.step(), send,
          c.peer().toString());
    };
  }

  /**
   * The PlanBuilder call that declares {@code c} over its axis: {@code b.collective(step, Collective.X,
   * send, recv, op, root, "tp")} for every collective (op null and root -1 where it takes none), {@code
   * b.send(step, buffer, "rank + 1", "pp")} and {@code b.recv(...)} for point-to-point.
   */
  private static CodeBlock overAxis(CollectiveSpec c, Refs in, String send, String recv) {
    if (c.kind().pointToPoint()) {
      return CodeBlock.of("$N.$L($L, $L, $S, $S)", in.planBuilder(), c.kind().methodName(), c.step(), send,
          c.peer().toString(), c.over());
    }
    return CodeBlock.of("$N.collective($L, $T.$L, $L, $L, $L, $L, $S)", in.planBuilder(), c.step(), COLLECTIVE,
        c.kind().name(), send, recv,
        c.kind().hasOp() ? CodeBlock.of("$T.$L", REDUCE_OP, c.op()) : CodeBlock.of("null"),
        c.kind().hasRoot() ? c.root() : -1, c.over());
  }

  /** The factors of a buffer's count, symbols by the dims' order then literals: {@code [4, hidden]}. */
  private List<String> factors(BufferSpec b) {
    return b.count().factors(g.symbolOrder());
  }

  /**
   * The count as a long expression of the symbols' values: {@code hidden} or {@code 4L} for one factor,
   * {@code PlanBuilder.count("w", "{\"4\", \"hidden\"}", 4L, hidden)} for more, which multiplies
   * exactly and, on overflow, fails with a PlanBuildException naming the field and its shape.
   */
  private CodeBlock count(BufferSpec b, Map<String, String> symbol) {
    List<CodeBlock> factors = new ArrayList<>();
    for (String factor : factors(b)) {
      factors.add(symbol.containsKey(factor) ? CodeBlock.of("$L", symbol.get(factor)) : CodeBlock.of("$LL", factor));
    }
    if (factors.size() == 1) {
      return factors.getFirst();
    }
    CodeBlock.Builder out = CodeBlock.builder().add("$T.count($S, $S", PLAN_BUILDER, b.field(), b.shapeAsWritten());
    for (CodeBlock factor : factors) {
      out.add(",$W$L", factor);
    }
    return out.add(")").build();
  }
}
