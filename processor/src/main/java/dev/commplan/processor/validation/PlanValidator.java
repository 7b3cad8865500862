package dev.commplan.processor.validation;

import dev.commplan.model.InPlace;
import dev.commplan.processor.diag.ValidationReport;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.parse.ParsedPlan;

/**
 * Checks a {@link ParsedPlan} against every rule of the contract's "must reject" list and returns what it
 * found as a {@link ValidationReport}. Never throws for bad input: everything wrong with a plan is an item.
 *
 * <p>The rules live in one class per family, named for what they check ({@link TargetRules}, {@link
 * DimRules}, {@link AxisRules}, {@link BucketRules}, {@link ShapeRules}, {@link FieldRules}, {@link
 * IntoRules}, {@link SizeRules}, {@link RootRules}, {@link ReduceOpRules}, {@link PeerRules}, {@link
 * RaceRules}); this class runs them in order over one {@link PlanContext}: the class, then the plan's
 * declarations (dims, axes, bucketBytes), then each field's shape, each field, each collective, and last
 * what spans collectives (races, point-to-point pairs).
 */
public final class PlanValidator {
  /** Validates one plan. */
  public ValidationReport validate(ParsedPlan plan) {
    return new Run(new PlanContext(plan)).validate();
  }

  private static final class Run {
    private final PlanContext cx;
    private final TargetRules target;
    private final DimRules dims;
    private final AxisRules axes;
    private final BucketRules buckets;
    private final ShapeRules shapes;
    private final FieldRules fields;
    private final IntoRules into;
    private final SizeRules sizes;
    private final RootRules roots;
    private final ReduceOpRules ops;
    private final PeerRules peers;
    private final RaceRules races;

    Run(PlanContext cx) {
      this.cx = cx;
      ShapeSuggestions suggest = new ShapeSuggestions(cx);
      this.target = new TargetRules(cx);
      this.dims = new DimRules(cx);
      this.axes = new AxisRules(cx);
      this.buckets = new BucketRules(cx);
      this.shapes = new ShapeRules(cx);
      this.fields = new FieldRules(cx, suggest);
      this.into = new IntoRules(cx, suggest);
      this.sizes = new SizeRules(cx);
      this.roots = new RootRules(cx);
      this.ops = new ReduceOpRules(cx);
      this.peers = new PeerRules(cx);
      this.races = new RaceRules(cx);
    }

    ValidationReport validate() {
      ParsedPlan plan = cx.plan;
      if (!target.checkTarget()) {
        return cx.report.build();
      }
      dims.checkRanks();
      dims.checkDims();
      axes.checkAxes();
      buckets.checkBucketBytes();
      target.checkName();
      for (ParsedField f : plan.fields()) {
        if (f.shape() != null) {
          shapes.checkShape(f).ifPresent(m -> cx.counts.put(f.name(), m));
        }
      }
      for (ParsedField f : plan.fields()) {
        if (f.annotated()) {
          fields.checkField(f);
        }
      }
      for (ParsedField f : plan.fields()) {
        for (ParsedCollective c : f.collectives()) {
          String recv = checkCollective(f, c);
          if (f.isBuffer()) {
            races.add(c, recv);
          }
        }
        races.checkDuplicates(f);
      }
      races.checkRaces();
      peers.checkPairs();
      return cx.report.build();
    }

    /**
     * Checks {@code c}; returns its receive buffer's field name (the field itself for Send and Recv), or
     * null when there is none ({@code into} is wrong or missing).
     */
    private String checkCollective(ParsedField f, ParsedCollective c) {
      axes.checkOver(f, c);
      roots.checkRoot(f, c);
      ops.checkOp(f, c);
      if (c.oneBuffer()) {
        peers.checkPeer(f, c);
        return f.name();
      }
      if (c.inPlace() && c.kind().inPlace() == InPlace.NOT_ALLOWED) {
        into.missingInto(f, c);
        return null;
      }
      if (c.inPlace()) {
        sizes.checkInPlaceDivisible(f, c);
        return f.name();
      }
      ParsedField recv = into.receiveBuffer(f, c);
      if (recv == null) {
        return null;
      }
      sizes.checkSizes(f, recv, c);
      return recv.name();
    }
  }
}
