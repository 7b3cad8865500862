package dev.commplan.samples;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.Schedule;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code overlap} sample's gradient plan ({@link OverlapGradsPlan}) as its training step sees it: the
 * loss and each layer's gradient buffers and {@code Field}s by layer number, which the compute writes and
 * marks ready, and the plan's calls. The buffers are the plan's own, laid out one after another, so that
 * the plan reduces neighbouring fields in one call. The plan's buckets go out on a communication stream of
 * its own, which this class makes with {@code newStream()} and closes after the plan.
 */
final class GradPlan implements AutoCloseable {
  private final OverlapGradsPlan plan;
  private final Stream commStream;
  private final F32Buffer[] weights;
  private final F32Buffer[] biases;
  private final OverlapGradsPlan.Field[] weightFields = {OverlapGradsPlan.Field.w0, OverlapGradsPlan.Field.w1,
      OverlapGradsPlan.Field.w2, OverlapGradsPlan.Field.w3, OverlapGradsPlan.Field.w4, OverlapGradsPlan.Field.w5,
      OverlapGradsPlan.Field.w6, OverlapGradsPlan.Field.w7, OverlapGradsPlan.Field.w8, OverlapGradsPlan.Field.w9,
      OverlapGradsPlan.Field.w10, OverlapGradsPlan.Field.w11, OverlapGradsPlan.Field.w12, OverlapGradsPlan.Field.w13,
      OverlapGradsPlan.Field.w14, OverlapGradsPlan.Field.w15};
  private final OverlapGradsPlan.Field[] biasFields = {OverlapGradsPlan.Field.b0, OverlapGradsPlan.Field.b1,
      OverlapGradsPlan.Field.b2, OverlapGradsPlan.Field.b3, OverlapGradsPlan.Field.b4, OverlapGradsPlan.Field.b5,
      OverlapGradsPlan.Field.b6, OverlapGradsPlan.Field.b7, OverlapGradsPlan.Field.b8, OverlapGradsPlan.Field.b9,
      OverlapGradsPlan.Field.b10, OverlapGradsPlan.Field.b11, OverlapGradsPlan.Field.b12, OverlapGradsPlan.Field.b13,
      OverlapGradsPlan.Field.b14, OverlapGradsPlan.Field.b15};
  /** Each bucket's fields, in the order the buckets go out. */
  private final List<Set<OverlapGradsPlan.Field>> bucketFields;
  /** The fields marked ready in this round and the buckets gone out, to tell the trace when a bucket leaves. */
  private final Set<OverlapGradsPlan.Field> marked = EnumSet.noneOf(OverlapGradsPlan.Field.class);
  private int enqueued;

  private GradPlan(OverlapGradsPlan plan, Stream commStream) {
    this.plan = plan;
    this.commStream = commStream;
    this.weights = new F32Buffer[] {plan.w0(), plan.w1(), plan.w2(), plan.w3(), plan.w4(), plan.w5(), plan.w6(),
        plan.w7(), plan.w8(), plan.w9(), plan.w10(), plan.w11(), plan.w12(), plan.w13(), plan.w14(), plan.w15()};
    this.biases = new F32Buffer[] {plan.b0(), plan.b1(), plan.b2(), plan.b3(), plan.b4(), plan.b5(), plan.b6(),
        plan.b7(), plan.b8(), plan.b9(), plan.b10(), plan.b11(), plan.b12(), plan.b13(), plan.b14(), plan.b15()};
    this.bucketFields = plan.schedule().buckets().stream().map(b -> {
      Set<OverlapGradsPlan.Field> fields = EnumSet.noneOf(OverlapGradsPlan.Field.class);
      b.fields().forEach(f -> fields.add(OverlapGradsPlan.Field.valueOf(f)));
      return fields;
    }).toList();
    if (weights.length != OverlapModel.LAYERS) {
      throw new IllegalStateException("OverlapGrads declares " + weights.length + " layers, OverlapModel has "
          + OverlapModel.LAYERS);
    }
  }

  /**
   * Builds the plan for layers of {@code width} on {@code comm}, its buckets of at most {@code bucketBytes}
   * (0: the annotation's), enqueued on a new stream of {@code comm}.
   *
   * <p>The host-access guard stays on: on the local backend the compute's host tasks, which may write a
   * layer's gradients after {@code ready} has enqueued the bucket that waits for them, run on a stream's
   * worker, whose accesses are device work to the guard (as GPU kernels are on NCCL).
   */
  static GradPlan build(Communicator comm, int width, long bucketBytes) {
    Stream commStream = comm.newStream();
    try {
      OverlapGradsPlan.Builder builder = OverlapGradsPlan.builder().width(width).commStream(commStream);
      if (bucketBytes > 0) {
        builder.bucketBytes(bucketBytes);
      }
      return new GradPlan(builder.build(comm), commStream);
    } catch (RuntimeException | Error e) {
      commStream.close();
      throw e;
    }
  }

  /** Builds the plan with the annotation's {@code bucketBytes}. */
  static GradPlan build(Communicator comm, int width) {
    return build(comm, width, 0);
  }

  /** The rank's loss; after the plan ran, the global batch's. */
  F32Buffer loss() {
    return plan.loss();
  }

  /** Layer {@code layer}'s weight gradient, column-major {@code width x width}. */
  F32Buffer weight(int layer) {
    return weights[layer];
  }

  /** Layer {@code layer}'s bias gradient. */
  F32Buffer bias(int layer) {
    return biases[layer];
  }

  /** The loss's field, for {@link #ready}. */
  OverlapGradsPlan.Field lossField() {
    return OverlapGradsPlan.Field.loss;
  }

  /**
   * Layer {@code layer}'s bias gradient's field and weight gradient's field, in that order: reverse declaration
   * order, the order the plan's buckets take the fields in.
   */
  List<OverlapGradsPlan.Field> layerFields(int layer) {
    return List.of(biasFields[layer], weightFields[layer]);
  }

  /** Enqueues the whole plan, every gradient and the loss, on {@code stream}. */
  void execute(Stream stream) {
    plan.execute(stream);
  }

  /**
   * Marks {@code field} written by the work enqueued on {@code producer} so far ({@code ready}); returns how
   * many buckets went out on the communication stream because of it (0 or more), for the trace.
   */
  int ready(OverlapGradsPlan.Field field, Stream producer) {
    plan.ready(field, producer);
    marked.add(field);
    // The rule of docs/dsl.md, followed here only to count: the next bucket goes once all its fields are ready.
    int before = enqueued;
    while (enqueued < bucketFields.size() && marked.containsAll(bucketFields.get(enqueued))) {
      enqueued++;
    }
    return enqueued - before;
  }

  /** Makes what {@code consumer} does next wait for every bucket ({@code finish}), and ends the round. */
  void finish(Stream consumer) {
    plan.finish(consumer);
    marked.clear();
    enqueued = 0;
  }

  /** The stream the buckets go out on. */
  Stream commStream() {
    return commStream;
  }

  /** The plan's buckets, in the order they go out. */
  List<Schedule.Bucket> buckets() {
    return plan.schedule().buckets();
  }

  /** What the plan issues, for the report. */
  String describe() {
    return plan.describe();
  }

  @Override
  public void close() {
    try {
      plan.close();
    } finally {
      commStream.close();
    }
  }
}
