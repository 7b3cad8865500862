package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Data-parallel training of {@link Mlp} on N ranks: rank 0's initial parameters are broadcast
 * ({@link DdpInit}), then every step each rank computes the gradient on its slice of the global batch
 * and {@link DdpGrads} averages it, so every replica takes the same Adam step. Prints the loss curve
 * next to a 1-rank run on the same global batch, and draws both into an SVG file.
 */
final class DdpSample {
  static final int STEPS = 100;
  static final long INIT_SEED = 1L;
  static final Path DEFAULT_OUT = Path.of("ddp-loss.svg");

  private DdpSample() {}

  /** What one rank ends with: the global batch's loss at every step, and its final parameters. */
  record RankResult(float[] losses, float[] params) {}

  static void run(String backend, int ranks, Path svg, PrintStream out) {
    int batch = Mlp.globalBatch(ranks);
    out.printf(Locale.ROOT, "ddp: MLP %d-%d-1 (%d parameters), Adam, %d steps, global batch %d = %s x %d, %s backend%n",
        Mlp.INPUTS, Mlp.HIDDEN, Mlp.PARAMS, STEPS, batch, LossTable.ranks(ranks), batch / ranks, backend);
    float[] single = train(backend, 1, batch, STEPS).get(0).losses();
    float[] multi = train(backend, ranks, batch, STEPS).get(0).losses();
    LossTable.print(out, STEPS, "loss (1 rank)", single, "loss (" + LossTable.ranks(ranks) + ")", multi);
    Path written = LossChart.write(svg, "ddp: " + Mlp.PARAMS + "-parameter MLP, global batch " + batch,
        List.of(new LossChart.Series("1 rank", single, false),
            new LossChart.Series(LossTable.ranks(ranks), multi, true)));
    out.println("loss curve: " + written.toAbsolutePath());
  }

  /** Trains on {@code ranks} ranks, each on {@code batch / ranks} samples a step; results by rank. */
  static List<RankResult> train(String backend, int ranks, int batch, int steps) {
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      return cluster.call(comm -> trainRank(comm, batch, steps));
    }
  }

  private static RankResult trainRank(Communicator comm, int batch, int steps) {
    int rank = comm.rank();
    int perRank = batch / comm.size();
    Stream stream = comm.stream();
    try (DdpInitPlan init = DdpInitPlan.builder().params(Mlp.PARAMS).build(comm);
        DdpGradsPlan sync = DdpGradsPlan.builder().params(Mlp.PARAMS).build(comm)) {
      // Every rank draws its own weights, as separate processes would; the broadcast keeps rank 0's.
      init.weights().copyFrom(Mlp.init(INIT_SEED + rank));
      init.execute(stream);
      stream.synchronize();
      float[] params = init.weights().toArray();

      Mlp.Adam adam = new Mlp.Adam(Mlp.PARAMS);
      float[] grad = new float[Mlp.PARAMS];
      float[] losses = new float[steps];
      for (int step = 0; step < steps; step++) {
        float loss = Mlp.lossAndGradient(params, step * batch + rank * perRank, perRank, grad);
        sync.grads().copyFrom(grad);
        sync.loss().set(0, loss);
        sync.execute(stream);
        stream.synchronize();
        sync.grads().copyTo(grad); // now the gradient of the whole global batch
        losses[step] = sync.loss().get(0);
        adam.update(params, grad);
      }
      return new RankResult(losses, params);
    }
  }
}
