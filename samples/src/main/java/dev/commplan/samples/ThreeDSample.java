package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.Stream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Pipeline, data and tensor parallelism at once, on a 3-D mesh {@code [pp, dp, tp]}: a {@link
 * ParallelMlp} of one block per pipeline stage (block s on the ranks at pp s), trained with the GPipe
 * schedule of the {@code pipeline} sample (activations sent to pp rank + 1 forward, gradients to pp rank
 * - 1 backward, micro-batch by micro-batch); each stage's block split over its tp group as in the {@code
 * tp} sample (an all-reduce over tp of the partial outputs in every forward tick and of the partial input
 * gradients in every backward tick); the whole pipeline replicated over dp (a slice of every batch per
 * replica, the gradients averaged over dp). One plan, {@link ThreeDStepsPlan}, carries all of it; the
 * training loop runs its steps one at a time. The sample trains the same model on one host and checks
 * the loss and every rank's parameters.
 *
 * <p>Every rank executes the same steps in the same order (a plan's steps are collective): in a stage's
 * bubble ticks it reduces and sends stale data, which the receivers, knowing the schedule, ignore.
 */
final class ThreeDSample {
  static final List<String> AXES = List.of("pp", "dp", "tp");
  static final String DEFAULT_MESH = "pp=2,dp=2,tp=2";
  static final int MICRO_BATCHES = 4;
  /** The plan's steps. */
  static final int TP_FORWARD = 0;
  static final int HOP_FORWARD = 1;
  static final int TP_BACKWARD = 2;
  static final int HOP_BACKWARD = 3;
  static final int DP_AVERAGE = 4;

  private ThreeDSample() {}

  /** What one rank ends with: the loss at every step (the last stage's, after the average; zeros elsewhere) and its shard. */
  record RankResult(float[] losses, float[] shard) {
    float[] pack() {
      float[] packed = Arrays.copyOf(losses, ParallelMlp.STEPS + shard.length);
      System.arraycopy(shard, 0, packed, ParallelMlp.STEPS, shard.length);
      return packed;
    }

    static RankResult unpack(float[] packed) {
      return new RankResult(Arrays.copyOf(packed, ParallelMlp.STEPS),
          Arrays.copyOfRange(packed, ParallelMlp.STEPS, packed.length));
    }
  }

  /** Why this sample cannot run on {@code mesh}, or null. */
  static String unsupported(MeshShape mesh) {
    int tp = mesh.size("tp");
    int dp = mesh.size("dp");
    if (ParallelMlp.HIDDEN % tp != 0) {
      return "tp=" + tp + " does not divide the model's " + ParallelMlp.HIDDEN + " hidden units (the columns of A"
          + " split over tp): tp is 1, 2, 4, 8 or 16";
    }
    int perReplica = ParallelMlp.BATCH / MICRO_BATCHES;
    if (perReplica % dp != 0) {
      return "dp=" + dp + " does not divide the batch of " + ParallelMlp.BATCH + " samples into " + MICRO_BATCHES
          + " micro-batches per replica: dp is 1, 2, 4 or 8";
    }
    return null;
  }

  /** Ticks of each phase: the last micro-batch leaves the last of {@code stages} stages at tick M + S - 2. */
  static int ticks(int stages) {
    return MICRO_BATCHES + stages - 1;
  }

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
      results.add(RankResult.unpack(packed));
    }
    return printAll(results, shape, "mpi", world.out());
  }

  /** Builds the mesh over {@code world} and trains this rank's part (collective: every rank calls it). */
  static RankResult trainRank(Communicator world, MeshShape shape, Tamper tamper) {
    try (Mesh mesh = shape.build(world)) {
      return train(mesh, tamper);
    }
  }

  /** This rank's training: {@link ParallelMlp#STEPS} GPipe steps of its shard of its stage's block. */
  static RankResult train(Mesh mesh, Tamper tamper) {
    int stages = mesh.size("pp");
    int stage = mesh.coordinate("pp");
    int dp = mesh.size("dp");
    int tp = mesh.size("tp");
    boolean last = stage == stages - 1;
    int ticks = ticks(stages);
    int replicaRows = ParallelMlp.BATCH / dp;
    int rows = replicaRows / MICRO_BATCHES;
    int from = mesh.coordinate("dp") * replicaRows; // this replica's slice of every batch
    int cols = ParallelMlp.cols(tp);
    float[] p = ParallelMlp.shard(ParallelMlp.init(stage), mesh.coordinate("tp"), tp);
    float[][] grad = {new float[p.length]};
    float[] losses = new float[ParallelMlp.STEPS];
    // Per micro-batch, what the backward phase needs: the stage's input, hidden units and output.
    float[][] inputs = new float[MICRO_BATCHES][];
    float[][] hidden = new float[MICRO_BATCHES][rows * cols];
    float[][] outputs = new float[MICRO_BATCHES][];
    Stream stream = mesh.world().stream();
    try (ThreeDStepsPlan plan = ThreeDStepsPlan.builder().batch(rows).width(ParallelMlp.WIDTH).cols(cols)
        .build(mesh)) {
      for (int step = 0; step < ParallelMlp.STEPS; step++) {
        // Forward: at tick t, stage s runs micro-batch t - s (tp all-reduce inside), then passes its output on.
        double loss = 0;
        for (int t = 0; t < ticks; t++) {
          int m = t - stage;
          boolean active = m >= 0 && m < MICRO_BATCHES;
          if (active) {
            inputs[m] = stage == 0 ? ParallelMlp.inputs(step, from + m * rows, rows) : plan.activationsIn().toArray();
            plan.partialOutput().copyFrom(ParallelMlp.partialForward(p, tp, inputs[m], rows, hidden[m]));
          }
          execute(plan, TP_FORWARD, tamper != Tamper.TP_FORWARD_NOT_REDUCED, stream);
          if (active) {
            outputs[m] = ParallelMlp.addBias(p, tp, plan.partialOutput().toArray(), rows);
            if (last) {
              loss += ParallelMlp.squaredError(outputs[m], ParallelMlp.targets(step, from + m * rows, rows));
            } else {
              plan.activationsOut().copyFrom(outputs[m]);
            }
          }
          if (t < ticks - 1) {
            execute(plan, HOP_FORWARD, true, stream); // activations to pp rank + 1 (none from the last stage)
          }
        }
        // Backward: at tick t, stage s runs micro-batch t - (S - 1 - s), then passes its input's gradient back.
        Arrays.fill(grad[0], 0f);
        for (int t = 0; t < ticks; t++) {
          int m = t - (stages - 1 - stage);
          boolean active = m >= 0 && m < MICRO_BATCHES;
          if (active) {
            float[] dOut = last
                ? ParallelMlp.lossGradient(outputs[m], ParallelMlp.targets(step, from + m * rows, rows), replicaRows)
                : plan.gradientsIn().toArray();
            plan.partialInputGrad().copyFrom(ParallelMlp.backward(p, tp, inputs[m], hidden[m], dOut, rows, grad[0]));
          }
          execute(plan, TP_BACKWARD, tamper != Tamper.TP_BACKWARD_NOT_REDUCED, stream);
          if (active) {
            plan.gradientsOut().copyFrom(plan.partialInputGrad().toArray());
          }
          if (t < ticks - 1) {
            execute(plan, HOP_BACKWARD, true, stream); // gradients to pp rank - 1 (none from the first stage)
          }
        }
        ParallelMlp.toBuffers(grad, tp, plan.gradA(), plan.gradBiasA(), plan.gradB(), plan.gradBiasB());
        plan.loss().set(0, last ? (float) (loss / (replicaRows * ParallelMlp.WIDTH)) : 0f);
        execute(plan, DP_AVERAGE, tamper != Tamper.DP_NOT_AVERAGED, stream);
        ParallelMlp.fromBuffers(grad, tp, plan.gradA(), plan.gradBiasA(), plan.gradB(), plan.gradBiasB());
        losses[step] = plan.loss().get(0);
        if (tamper == Tamper.DP_SUMMED) {
          TpSample.scale(grad[0], dp);
        }
        ParallelMlp.sgd(p, grad[0]);
      }
    }
    return new RankResult(losses, p);
  }

  private static void execute(ThreeDStepsPlan plan, int step, boolean execute, Stream stream) {
    if (execute) {
      plan.executeStep(step, stream);
      stream.synchronize();
    }
  }

  /**
   * Prints what each axis does, the loss curve next to the one-host model's, every rank's parameters (and
   * the last stage's loss curves) against the one-host model's, and a check line; returns whether
   * everything is within {@link ParallelMlp#TOLERANCE}.
   */
  static boolean printAll(List<RankResult> results, MeshShape shape, String backend, PrintStream out) {
    int ranks = results.size();
    int stages = shape.size("pp");
    int dp = shape.size("dp");
    int tp = shape.size("tp");
    int cols = ParallelMlp.cols(tp);
    int replicaRows = ParallelMlp.BATCH / dp;
    int rows = replicaRows / MICRO_BATCHES;
    int ticks = ticks(stages);
    out.printf(Locale.ROOT, "3d: pipeline x data x tensor parallel training of an MLP on %s as the mesh %s, %s"
        + " backend%n", LossTable.ranks(ranks), shape, backend);
    out.printf(Locale.ROOT, "model: %d %s y = tanh(x A + a) B + b (width %d, %d hidden units), one per stage, mean"
            + " squared error, SGD lr %s, %d steps of a batch of %d%n", stages, stages == 1 ? "block" : "blocks",
        ParallelMlp.WIDTH, ParallelMlp.HIDDEN, ParallelMlp.LR, ParallelMlp.STEPS, ParallelMlp.BATCH);
    out.printf(Locale.ROOT, "mesh: %s; pp groups %s; dp groups %s; tp groups %s%n", shape.layout(),
        shape.groupsText("pp"), shape.groupsText("dp"), shape.groupsText("tp"));
    out.printf(Locale.ROOT, "over pp, %d %s: stage s holds block s; GPipe, a replica's %d samples as %d micro-batches"
            + " of %d: forward %d ticks, each but the last ending in a send of activations to pp rank + 1 (ThreeDSteps"
            + " step %d); backward %d ticks, each but the last ending in a send of input gradients to pp rank - 1 (step"
            + " %d)%n", stages, stages == 1 ? "stage" : "stages", replicaRows, MICRO_BATCHES, rows, ticks, HOP_FORWARD,
        ticks, HOP_BACKWARD);
    out.printf(Locale.ROOT, "over tp, %s a group: tp rank t holds %s of its block's A and a, the same %s of B, and b"
            + " whole; every forward tick: all-reduce SUM over tp of the partial outputs (step %d); every backward tick:"
            + " of the partial input gradients (step %d)%n", LossTable.ranks(tp), TpSample.slice("column", cols),
        TpSample.slice("row", cols), TP_FORWARD, TP_BACKWARD);
    out.printf(Locale.ROOT, "over dp, %d %s: replica d trains on %s of each batch; all-reduce AVG over dp of the"
        + " gradients and the loss (step %d)%n", dp, dp == 1 ? "replica" : "replicas",
        dp == 1 ? "all " + replicaRows + " samples" : "samples " + replicaRows + "d.." + replicaRows + "d+"
            + (replicaRows - 1), DP_AVERAGE);
    ParallelMlp.Reference reference = ParallelMlp.reference(stages);
    List<float[]> losses = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      losses.add(shape.coordinate(r, "pp") == stages - 1 ? results.get(r).losses() : null);
    }
    return Report.check(out, losses, reference.losses(),
        r -> LossTable.maxDiff(results.get(r).shard(), ParallelMlp.shard(reference.params()[shape.coordinate(r, "pp")],
            shape.coordinate(r, "tp"), tp)),
        r -> String.format(Locale.ROOT, "rank %d (%s): block %d, %d parameters (A %s, B %s)", r, shape.coordinates(r),
            shape.coordinate(r, "pp"), ParallelMlp.shardParams(tp), TpSample.span("columns", shape.coordinate(r, "tp"),
                cols), TpSample.span("rows", shape.coordinate(r, "tp"), cols)),
        "mesh " + shape.product());
  }
}
