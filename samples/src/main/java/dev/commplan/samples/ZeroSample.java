package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The {@code ddp} model trained with ZeRO-1: the optimizer state is split across the ranks. Each
 * training step runs the two steps of {@link ZeroStep}: step 0 reduce-scatters the gradient so that each
 * rank gets the average of its own shard; the rank then takes the Adam step on that shard only (so it
 * holds Adam state for 1/N of the parameters); step 1 all-gathers the updated shards into the whole
 * parameter vector.
 */
final class ZeroSample {
  private ZeroSample() {}

  /** What one rank ends with: losses, final (unpadded) parameters, and its optimizer state size. */
  record RankResult(float[] losses, float[] params, int optimizerStateFloats) {}

  static void run(String backend, int ranks, PrintStream out) {
    int batch = Mlp.globalBatch(ranks);
    int shard = shard(ranks);
    int padded = ranks * shard;
    out.printf(Locale.ROOT, "zero: ZeRO-1 on %s, %s backend, same model, data and Adam as ddp (%d steps, global batch %d)%n",
        LossTable.ranks(ranks), backend, DdpSample.STEPS, batch);
    out.printf(Locale.ROOT, "parameters: %d, padded to %d = %s x shard %d (%d padding zeros at the end)%n",
        Mlp.PARAMS, padded, LossTable.ranks(ranks), shard, padded - Mlp.PARAMS);
    List<RankResult> zero = train(backend, ranks, batch, DdpSample.STEPS);
    float[] ddp = DdpSample.train(backend, ranks, batch, DdpSample.STEPS).get(0).losses();
    out.printf(Locale.ROOT, "optimizer state per rank (Adam m and v): zero %d floats (2 x %d), ddp %d floats (2 x %d)%n",
        zero.get(0).optimizerStateFloats(), shard, 2 * Mlp.PARAMS, Mlp.PARAMS);
    LossTable.print(out, DdpSample.STEPS, "loss (ddp)", ddp, "loss (zero)", zero.get(0).losses());
  }

  /** Elements of the parameter vector each rank owns: PARAMS rounded up to a multiple of ranks, over ranks. */
  static int shard(int ranks) {
    return (Mlp.PARAMS + ranks - 1) / ranks;
  }

  static List<RankResult> train(String backend, int ranks, int batch, int steps) {
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      return cluster.call(comm -> trainRank(comm, batch, steps));
    }
  }

  private static RankResult trainRank(Communicator comm, int batch, int steps) {
    int rank = comm.rank();
    int perRank = batch / comm.size();
    int shard = shard(comm.size());
    int mine = rank * shard; // this rank's shard: elements [mine, mine + shard) of the padded vector
    Stream stream = comm.stream();
    try (DdpInitPlan init = DdpInitPlan.builder().params(Mlp.PARAMS).build(comm);
        ZeroStepPlan zero = ZeroStepPlan.builder().shard(shard).build(comm)) {
      init.weights().copyFrom(Mlp.init(DdpSample.INIT_SEED + rank));
      init.execute(stream);
      stream.synchronize();
      // The padded vector: PARAMS real parameters, then zeros (their gradient is always 0, so they stay 0).
      float[] params = Arrays.copyOf(init.weights().toArray(), comm.size() * shard);
      float[] myParams = Arrays.copyOfRange(params, mine, mine + shard);

      Mlp.Adam adam = new Mlp.Adam(shard); // state for this rank's shard only
      float[] grad = new float[params.length];
      float[] myGrad = new float[shard];
      float[] losses = new float[steps];
      for (int step = 0; step < steps; step++) {
        float loss = Mlp.lossAndGradient(params, step * batch + rank * perRank, perRank, grad);
        zero.grads().copyFrom(grad);
        zero.loss().set(0, loss);
        zero.executeStep(0, stream); // reduce-scatter the gradient, average the loss
        stream.synchronize();
        zero.gradShard().copyTo(myGrad); // the global batch's gradient, this rank's shard of it
        losses[step] = zero.loss().get(0);

        adam.update(myParams, myGrad);

        zero.paramShard().copyFrom(myParams);
        zero.executeStep(1, stream); // all-gather the updated shards
        stream.synchronize();
        zero.params().copyTo(params);
      }
      return new RankResult(losses, Arrays.copyOf(params, Mlp.PARAMS), adam.stateFloats());
    }
  }
}
