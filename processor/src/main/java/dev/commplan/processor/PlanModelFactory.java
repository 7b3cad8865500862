package dev.commplan.processor;

import dev.commplan.model.Peer;
import dev.commplan.processor.model.BufferSpec;
import dev.commplan.processor.model.CollectiveSpec;
import dev.commplan.processor.model.MethodNames;
import dev.commplan.processor.model.PlanModel;
import dev.commplan.processor.parse.FieldIndex;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.parse.ParsedPlan;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** A validated {@link ParsedPlan} to its {@link PlanModel}: counts, names, and the collectives in order. */
final class PlanModelFactory {
  private PlanModelFactory() {}

  /** Builds the model of {@code plan}, whose validation report is clean. */
  static PlanModel create(ParsedPlan plan) {
    boolean bucketed = plan.bucketed();
    List<ParsedField> bufferFields = plan.fields().stream().filter(f -> f.shape() != null).toList();
    List<String> names = bufferFields.stream().map(ParsedField::name).toList();
    List<String> accessors = MethodNames.accessors(names, plan.generatedName(), bucketed);
    List<String> binds = MethodNames.bindMethods(names);
    Map<String, String> constants = new HashMap<>();
    if (bucketed) {
      List<String> sent = plan.sentFields().stream().map(ParsedField::name).toList();
      List<String> chosen = MethodNames.fieldConstants(sent);
      for (int i = 0; i < sent.size(); i++) {
        constants.put(sent.get(i), chosen.get(i));
      }
    }
    List<BufferSpec> buffers = new ArrayList<>();
    for (int i = 0; i < bufferFields.size(); i++) {
      ParsedField f = bufferFields.get(i);
      buffers.add(new BufferSpec(f.name(), f.bufferType(), f.shape().count(), f.shape().texts(), accessors.get(i),
          binds.get(i), constants.get(f.name())));
    }

    List<String> dimNames = plan.dimNames();
    List<String> setters = MethodNames.dimSetters(dimNames, binds, bucketed);
    List<PlanModel.Dim> dims = new ArrayList<>();
    for (int i = 0; i < dimNames.size(); i++) {
      dims.add(new PlanModel.Dim(dimNames.get(i), setters.get(i)));
    }

    FieldIndex byName = new FieldIndex(plan.fields());
    List<CollectiveSpec> collectives = new ArrayList<>();
    for (ParsedField f : plan.fields()) {
      for (ParsedCollective c : f.collectives()) {
        collectives.add(new CollectiveSpec(
            c.kind(),
            c.step().value(),
            f.name(),
            byName.find(c.recv()).map(ParsedField::name).orElseThrow(),
            c.op() == null ? null : c.op().value(),
            c.root() == null ? -1 : c.root().value(),
            c.peer() == null ? null : Peer.parse(c.peer().value()), // parses: the report is clean
            c.axis()));
      }
    }
    collectives.sort(Comparator.comparingInt(CollectiveSpec::step)); // stable: declaration order within a step

    return new PlanModel(
        plan.qualifiedName(),
        plan.packageName(),
        plan.generatedName(),
        plan.ranks().value(),
        dims,
        plan.axisNames(),
        buffers,
        collectives,
        plan.bucketBytes().value(),
        plan.checkFinite().value());
  }
}
