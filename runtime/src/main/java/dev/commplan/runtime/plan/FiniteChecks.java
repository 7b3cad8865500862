package dev.commplan.runtime.plan;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.agreement.FiniteVerdict;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The finite check of a plan's units ({@link PlanBuilder#checkFinite}; docs/dsl.md, "Finite checks"): for each
 * step (or, for a bucketed plan's rounds, each bucket) whose calls include a reduction (a collective that takes an
 * op: AllReduce, Reduce, ReduceScatter) of a floating-point type, the backend's search of the fields those
 * reductions send ({@link NonFiniteScan}, made once here), and the verdict the ranks agree on ({@link
 * FiniteVerdict}). Before such a unit is enqueued, {@link #check} enqueues the search on the unit's stream, has the
 * ranks exchange what they found, waits for the stream and throws {@code NonFiniteException} on every rank where any
 * rank found one; so the unit goes out on every rank or on none. Units without such a reduction are not checked and
 * cost nothing. Used by the thread that holds the communicator's gate.
 */
final class FiniteChecks {
  private final String planName;
  private final FiniteVerdict verdict;
  /** Per unit, its search, or null where the unit has no floating-point reduction. */
  private final NonFiniteScan[] scans;
  private final FiniteVerdict.Unit[] units;

  /**
   * The checks of {@code units} (a schedule's steps, or a bucketed plan's buckets as steps).
   *
   * @param compiled the units' schedule, compiled: its backend makes the searches
   * @param handles per unit, the handles of the fields it checks ({@link #handles})
   * @param views per handle, the plan's buffer
   * @param names per handle, the field's name
   * @param verdict the plan's verdicts, whose findings hold as many regions as the largest unit has; null where no
   *     unit has a floating-point reduction
   */
  FiniteChecks(String planName, CompiledSchedule compiled, List<Step> units, int[][] handles, Buffer[] views,
      List<String> names, FiniteVerdict verdict) {
    this.planName = planName;
    this.verdict = verdict;
    this.scans = new NonFiniteScan[units.size()];
    this.units = new FiniteVerdict.Unit[units.size()];
    for (int u = 0; u < units.size(); u++) {
      if (handles[u].length == 0) {
        continue;
      }
      List<NonFiniteScan.Region> regions = new ArrayList<>();
      List<String> fields = new ArrayList<>();
      List<DataType> types = new ArrayList<>();
      for (int h : handles[u]) {
        Buffer b = views[h];
        regions.add(new NonFiniteScan.Region(b.memory(), b.byteOffset(), b.length(), b.dataType()));
        fields.add(names.get(h));
        types.add(b.dataType());
      }
      Step step = units.get(u);
      scans[u] = compiled.nonFiniteScan(regions, verdict.findings());
      this.units[u] = new FiniteVerdict.Unit(planName, step.number(), "plan " + planName + ", step " + step.number()
          + (step.bucket() >= 0 ? ", bucket " + step.bucket() : ""), fields, types);
    }
  }

  /**
   * Per unit, the handles of the fields that its floating-point reductions send, each once, in the order its calls
   * list them (the same on every rank: the fingerprint compares the calls).
   *
   * @param units the steps, or the buckets as steps
   * @param names per handle, the field's name
   * @return per unit, the handles; empty where the unit has no floating-point reduction
   */
  static int[][] handles(List<Step> units, List<String> names) {
    int[][] out = new int[units.size()][];
    for (int u = 0; u < units.size(); u++) {
      Set<Integer> checked = new LinkedHashSet<>();
      for (CollectiveCall call : units.get(u).calls()) {
        if (call.collective().hasOp() && call.dataType().isFloatingPoint()) {
          for (String field : call.fields()) {
            checked.add(names.indexOf(field));
          }
        }
      }
      out[u] = checked.stream().mapToInt(Integer::intValue).toArray();
    }
    return out;
  }

  /** {@return the most handles one unit of {@code handles} checks} */
  static int most(int[][] handles) {
    int most = 0;
    for (int[] h : handles) {
      most = Math.max(most, h.length);
    }
    return most;
  }

  /** {@return whether any unit is checked (a plan without a floating-point reduction has nothing to search)} */
  boolean any() {
    for (NonFiniteScan scan : scans) {
      if (scan != null) {
        return true;
      }
    }
    return false;
  }

  /** {@return whether unit {@code unit} is checked before it is enqueued} */
  boolean checks(int unit) {
    return scans[unit] != null;
  }

  /**
   * Refuses, before anything of it is enqueued, {@code what} (an execute, a step, a launch, a bucket) of units
   * {@code [from, to)} where one of them is checked and its verdict could not be waited for: on a stream being
   * captured into a CUDA graph (nothing runs until the graph is launched), or inside a group the user opened.
   *
   * @param capturing whether the stream is being captured, as the backend just said
   * @throws IllegalStateException naming the plan and what to do instead
   */
  void refuse(String what, boolean capturing, int from, int to) {
    boolean any = false;
    for (int u = from; u < to && !any; u++) {
      any = checks(u);
    }
    if (!any) {
      return;
    }
    if (capturing) {
      throw new IllegalStateException("plan " + planName + ": " + what + " on a stream being captured into a CUDA"
          + " graph, but the plan is built with the finite check (checkFinite), whose verdict is waited for on the"
          + " host before each checked step, and nothing runs during a capture; execute it outside the capture, or"
          + " build it with checkFinite(false) for the graph");
    }
    verdict.refuseInGroup(planName, what);
  }

  /**
   * Searches unit {@code unit}'s send data on {@code stream}, after the work enqueued there before, has the ranks
   * agree on what was found and waits for it: returns where no rank found a NaN or an infinity. A collective: every
   * rank of the plan checks the same unit at the same point.
   *
   * @throws dev.commplan.runtime.NonFiniteException on every rank, where any rank found one
   */
  void check(int unit, Stream stream) {
    scans[unit].enqueue(stream);
    verdict.decide(stream, units[unit]);
  }

  /**
   * {@code Plan.describe()}'s line: {@code   finite check: before step 0 (w, bias), step 1 (x)}, or that nothing
   * is checked.
   */
  String describe() {
    StringBuilder out = new StringBuilder("  finite check: ");
    boolean first = true;
    for (FiniteVerdict.Unit u : units) {
      if (u != null) {
        out.append(first ? "before step " : ", step ").append(u.step()).append(" (")
            .append(String.join(", ", u.fields())).append(')');
        first = false;
      }
    }
    return out.append(first ? "no step reduces a floating-point field, so nothing is searched\n"
        : "; each rank's send data is searched for NaN and infinity, and the ranks agree, before the step goes out\n")
        .toString();
  }
}
