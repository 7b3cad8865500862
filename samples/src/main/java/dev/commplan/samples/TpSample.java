package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.Stream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Tensor and data parallelism on a 2-D mesh {@code [dp, tp]}: a {@link ParallelMlp} of {@link #BLOCKS}
 * blocks, each split Megatron-style over the tp group (A column-parallel, B row-parallel, an all-reduce
 * over tp of the partial outputs forward and of the partial input gradients backward), replicated over dp
 * (each replica a different slice of every batch, the gradients averaged over dp before each SGD step).
 * The communication is one plan, {@link TpStepsPlan}, whose steps the training loop runs one at a time.
 * The sample trains the same model on one host and checks every rank's loss curve and parameters.
 */
final class TpSample {
  static final List<String> AXES = List.of("dp", "tp");
  static final String DEFAULT_MESH = "dp=2,tp=4";
  static final int BLOCKS = 2;
  /** The plan's steps. */
  static final int TP_FORWARD = 0;
  static final int TP_BACKWARD = 1;
  static final int DP_AVERAGE = 2;

  private TpSample() {}

  /** What one rank ends with: the loss at every step (the whole batch's, after the average) and its shards. */
  record RankResult(float[] losses, float[][] shards) {
    float[] pack() {
      int n = shards[0].length;
      float[] packed = Arrays.copyOf(losses, ParallelMlp.STEPS + shards.length * n);
      for (int l = 0; l < shards.length; l++) {
        System.arraycopy(shards[l], 0, packed, ParallelMlp.STEPS + l * n, n);
      }
      return packed;
    }

    static RankResult unpack(float[] packed, int blocks) {
      int n = (packed.length - ParallelMlp.STEPS) / blocks;
      float[][] shards = new float[blocks][];
      for (int l = 0; l < blocks; l++) {
        shards[l] = Arrays.copyOfRange(packed, ParallelMlp.STEPS + l * n, ParallelMlp.STEPS + (l + 1) * n);
      }
      return new RankResult(Arrays.copyOf(packed, ParallelMlp.STEPS), shards);
    }
  }

  /** Why this sample cannot run on {@code mesh} (a tp that does not divide the hidden units, ...), or null. */
  static String unsupported(MeshShape mesh) {
    int tp = mesh.size("tp");
    int dp = mesh.size("dp");
    if (ParallelMlp.HIDDEN % tp != 0) {
      return "tp=" + tp + " does not divide the model's " + ParallelMlp.HIDDEN + " hidden units (the columns of A"
          + " split over tp): tp is 1, 2, 4, 8 or 16";
    }
    if (ParallelMlp.BATCH % dp != 0) {
      return "dp=" + dp + " does not divide the batch of " + ParallelMlp.BATCH + " samples (split over the dp"
          + " replicas): dp is 1, 2, 4, 8, 16 or 32";
    }
    return null;
  }

  /** Trains on a cluster of {@code shape.ranks()} ranks, prints the report; returns whether it matches one host. */
  static boolean run(String backend, MeshShape shape, PrintStream out) {
    List<RankResult> results;
    try (Cluster cluster = Backends.cluster(backend, shape.ranks())) {
      results = cluster.call(comm -> trainRank(comm, shape, Tamper.NONE));
    }
    return printAll(results, shape, backend, out);
  }

  /** The sample as one rank of {@code MPI_COMM_WORLD}: rank 0 prints the report. */
  static boolean runMpi(MeshShape shape, PrintStream out) {
    MpiWorld.Gathered world = MpiWorld.run(shape.ranks(), "--mesh " + shape, comm -> trainRank(comm, shape,
        Tamper.NONE).pack(), out);
    List<RankResult> results = new ArrayList<>();
    for (float[] packed : world.results()) {
      results.add(RankResult.unpack(packed, BLOCKS));
    }
    return printAll(results, shape, "mpi", world.out());
  }

  /** Builds the mesh over {@code world} and trains this rank's part (collective: every rank calls it). */
  static RankResult trainRank(Communicator world, MeshShape shape, Tamper tamper) {
    try (Mesh mesh = shape.build(world)) {
      return train(mesh, tamper);
    }
  }

  /** This rank's training: {@link ParallelMlp#STEPS} SGD steps of its shards of the {@link #BLOCKS} blocks. */
  static RankResult train(Mesh mesh, Tamper tamper) {
    int dp = mesh.size("dp");
    int tp = mesh.size("tp");
    int t = mesh.coordinate("tp");
    int rows = ParallelMlp.BATCH / dp;
    int from = mesh.coordinate("dp") * rows; // this replica's slice of every batch
    int cols = ParallelMlp.cols(tp);
    float[][] p = new float[BLOCKS][];
    for (int l = 0; l < BLOCKS; l++) {
      p[l] = ParallelMlp.shard(ParallelMlp.init(l), t, tp); // every rank draws the whole block, keeps its shard
    }
    float[][] grad = new float[BLOCKS][ParallelMlp.shardParams(tp)];
    float[][] inputs = new float[BLOCKS][];
    float[][] hidden = new float[BLOCKS][rows * cols];
    float[] losses = new float[ParallelMlp.STEPS];
    Stream stream = mesh.world().stream();
    try (TpStepsPlan plan = TpStepsPlan.builder().batch(rows).width(ParallelMlp.WIDTH).cols(cols).blocks(BLOCKS)
        .build(mesh)) {
      for (int step = 0; step < ParallelMlp.STEPS; step++) {
        float[] x = ParallelMlp.inputs(step, from, rows);
        for (int l = 0; l < BLOCKS; l++) {
          inputs[l] = x;
          float[] partial = ParallelMlp.partialForward(p[l], tp, x, rows, hidden[l]);
          x = reduce(plan, TP_FORWARD, plan.partialOutput(), partial, tamper != Tamper.TP_FORWARD_NOT_REDUCED, stream);
          ParallelMlp.addBias(p[l], tp, x, rows);
        }
        float[] y = ParallelMlp.targets(step, from, rows);
        float loss = (float) (ParallelMlp.squaredError(x, y) / (rows * ParallelMlp.WIDTH));
        float[] d = ParallelMlp.lossGradient(x, y, rows);
        for (float[] g : grad) {
          Arrays.fill(g, 0f);
        }
        for (int l = BLOCKS - 1; l >= 0; l--) {
          float[] partialInputGrad = ParallelMlp.backward(p[l], tp, inputs[l], hidden[l], d, rows, grad[l]);
          if (l > 0) { // block 0's input is the data: its gradient is not needed
            d = reduce(plan, TP_BACKWARD, plan.partialInputGrad(), partialInputGrad,
                tamper != Tamper.TP_BACKWARD_NOT_REDUCED, stream);
          }
        }
        ParallelMlp.toBuffers(grad, tp, plan.gradA(), plan.gradBiasA(), plan.gradB(), plan.gradBiasB());
        plan.loss().set(0, loss);
        if (tamper != Tamper.DP_NOT_AVERAGED) {
          plan.executeStep(DP_AVERAGE, stream); // gradients and loss, averaged over the replicas
          stream.synchronize();
        }
        ParallelMlp.fromBuffers(grad, tp, plan.gradA(), plan.gradBiasA(), plan.gradB(), plan.gradBiasB());
        losses[step] = plan.loss().get(0);
        for (int l = 0; l < BLOCKS; l++) {
          if (tamper == Tamper.DP_SUMMED) {
            scale(grad[l], dp);
          }
          ParallelMlp.sgd(p[l], grad[l]);
        }
      }
    }
    return new RankResult(losses, p);
  }

  /** Puts {@code part} in {@code buffer}, runs the plan's step (an all-reduce over tp) unless told not to, and returns the result. */
  private static float[] reduce(TpStepsPlan plan, int step, F32Buffer buffer, float[] part, boolean execute,
      Stream stream) {
    buffer.copyFrom(part);
    if (execute) {
      plan.executeStep(step, stream);
      stream.synchronize();
    }
    return buffer.toArray();
  }

  static void scale(float[] values, float factor) {
    for (int i = 0; i < values.length; i++) {
      values[i] *= factor;
    }
  }

  /**
   * Prints what each axis does, the loss curve next to the one-host model's, every rank's loss curve and
   * shards against the one-host model's, and a check line; returns whether everything is within {@link
   * ParallelMlp#TOLERANCE}.
   */
  static boolean printAll(List<RankResult> results, MeshShape shape, String backend, PrintStream out) {
    int ranks = results.size();
    int dp = shape.size("dp");
    int tp = shape.size("tp");
    int cols = ParallelMlp.cols(tp);
    int rows = ParallelMlp.BATCH / dp;
    out.printf(Locale.ROOT, "tp: a Megatron-style MLP, tensor-parallel over tp and data-parallel over dp, on %s as the"
        + " mesh %s, %s backend%n", LossTable.ranks(ranks), shape, backend);
    out.printf(Locale.ROOT, "model: %d blocks y = tanh(x A + a) B + b (width %d, %d hidden units), mean squared error,"
            + " SGD lr %s, %d steps of a batch of %d%n", BLOCKS, ParallelMlp.WIDTH, ParallelMlp.HIDDEN, ParallelMlp.LR,
        ParallelMlp.STEPS, ParallelMlp.BATCH);
    out.printf(Locale.ROOT, "mesh: %s; tp groups %s; dp groups %s%n", shape.layout(), shape.groupsText("tp"),
        shape.groupsText("dp"));
    out.printf(Locale.ROOT, "over tp, %s a group: tp rank t holds %s of A and a (column-parallel), the same %s of B"
        + " (row-parallel), and b whole%n", LossTable.ranks(tp), slice("column", cols), slice("row", cols));
    out.printf(Locale.ROOT, "  forward, each block: all-reduce SUM over tp of the partial outputs H_t B_t, the block's"
        + " output (TpSteps step %d)%n", TP_FORWARD);
    out.printf(Locale.ROOT, "  backward: all-reduce SUM over tp of block 1's input gradient, each rank's part from its"
        + " columns (step %d; block 0's input is the data, whose gradient is not needed)%n", TP_BACKWARD);
    out.printf(Locale.ROOT, "over dp, %d %s: replica d trains on %s of each batch; all-reduce AVG over dp of the"
        + " gradients and the loss (step %d)%n", dp, dp == 1 ? "replica" : "replicas",
        rows == ParallelMlp.BATCH ? "all " + rows + " samples" : "samples " + rows + "d.." + rows + "d+" + (rows - 1),
        DP_AVERAGE);
    ParallelMlp.Reference reference = ParallelMlp.reference(BLOCKS);
    return Report.check(out, results.stream().map(RankResult::losses).toList(), reference.losses(),
        r -> shardDiff(results.get(r).shards(), reference.params(), shape.coordinate(r, "tp"), tp),
        r -> String.format(Locale.ROOT, "rank %d (%s): %d blocks x %d parameters (A %s, B %s)", r,
            shape.coordinates(r), BLOCKS, ParallelMlp.shardParams(tp),
            span("columns", shape.coordinate(r, "tp"), cols), span("rows", shape.coordinate(r, "tp"), cols)),
        "mesh " + shape.product());
  }

  /** The largest difference between a rank's shards and the same shards of the one-host model's blocks. */
  static double shardDiff(float[][] shards, float[][] whole, int t, int tp) {
    double diff = 0;
    for (int l = 0; l < shards.length; l++) {
      diff = Math.max(diff, LossTable.maxDiff(shards[l], ParallelMlp.shard(whole[l], t, tp)));
    }
    return diff;
  }

  /** "columns 4t..4t+3", "column t". */
  static String slice(String what, int cols) {
    return cols == 1 ? what + " t" : what + "s " + cols + "t.." + cols + "t+" + (cols - 1);
  }

  /** "columns 4..7". */
  static String span(String what, int t, int cols) {
    return cols == 1 ? what.substring(0, what.length() - 1) + " " + t : what + " " + t * cols + ".." + ((t + 1) * cols - 1);
  }
}
