package dev.commplan.processor.model;

import java.util.List;

/**
 * A valid plan, everything the generator needs and nothing from {@code javax.lang.model}: the generator
 * never sees an {@code Element}.
 *
 * @param planName the annotated class's qualified name, such as {@code p.Outer.Grads}
 * @param packageName the package of the annotated and the generated class ({@code ""} for none)
 * @param className the generated class's simple name, such as {@code Outer_GradsPlan}
 * @param fixedRanks {@code @CommPlan(ranks)}: 0 for any world size
 * @param dims the dims in declaration order
 * @param axes the mesh axes ({@code @CommPlan(axes)}) in declaration order; empty for a plan built on a
 *     communicator
 * @param buffers the plan's buffers in field declaration order
 * @param collectives the collectives by ascending step, in declaration order within a step
 * @param bucketBytes {@code @CommPlan(bucketBytes)}: 0 for a plan without buckets, else the most bytes of
 *     one bucket, the generated builder's default
 * @param checkFinite {@code @CommPlan(checkFinite)}: the generated build turns the runtime's finite check on (only
 *     where true, so that plans without it generate what they did before)
 */
public record PlanModel(
    String planName,
    String packageName,
    String className,
    int fixedRanks,
    List<Dim> dims,
    List<String> axes,
    List<BufferSpec> buffers,
    List<CollectiveSpec> collectives,
    long bucketBytes,
    boolean checkFinite) {

  public PlanModel {
    dims = List.copyOf(dims);
    axes = List.copyOf(axes);
    buffers = List.copyOf(buffers);
    collectives = List.copyOf(collectives);
  }

  /** Whether it runs over mesh axes, and is built on a {@code Mesh}. */
  public boolean overMesh() {
    return !axes.isEmpty();
  }

  /**
   * Whether it is cut into buckets: its generated class has {@code enum Field}, {@code ready}, {@code
   * finish} and {@code buckets()}, and its builder {@code commStream} and {@code bucketBytes}.
   */
  public boolean bucketed() {
    return bucketBytes > 0;
  }

  /** The buffers that have a constant in the generated {@code enum Field}, in declaration order (the enum's). */
  public List<BufferSpec> fieldConstants() {
    return buffers.stream().filter(BufferSpec::hasFieldConstant).toList();
  }

  /** The generated class's qualified name. */
  public String qualifiedClassName() {
    return packageName.isEmpty() ? className : packageName + "." + className;
  }

  /**
   * A dim of {@code @CommPlan(dims)}.
   *
   * @param name the name as declared, used in {@code @Shape}
   * @param setter the Builder's setter for it: the name, unless that clashes (see docs/dsl.md)
   */
  public record Dim(String name, String setter) {}
}
