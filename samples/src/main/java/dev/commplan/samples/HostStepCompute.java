package dev.commplan.samples;

import dev.commplan.runtime.Stream;

/**
 * A rank's compute on the host ({@link HostLayers}), run where {@link HostQueue#of} says: on the local
 * backend by the stream's worker thread, so that it runs beside communication on another stream; on MPI
 * by the rank's own thread.
 */
final class HostStepCompute implements StepCompute {
  private final Stream stream;
  private final HostQueue queue;
  private final HostLayers layers;
  private final int ranks;
  private final int rank;
  /** The rank's share of each of the data set's global batches, inputs and targets. */
  private final float[][] inputs;
  private final float[][] targets;
  private final float[] dw;
  private final float[] db;

  /**
   * The compute of rank {@code rank} of {@code ranks}, on {@code stream}, from {@link OverlapModel#init}.
   *
   * @param stream the rank's stream
   */
  HostStepCompute(Stream stream, OverlapModel.Size size, int ranks, int rank) {
    this.stream = stream;
    this.queue = HostQueue.of(stream);
    OverlapModel.Params params = OverlapModel.init(size.width());
    this.layers = new HostLayers(params.weights(), params.biases(), size.batch());
    this.ranks = ranks;
    this.rank = rank;
    int floats = size.batch() * size.width();
    this.inputs = new float[OverlapModel.DATA_BATCHES][floats];
    this.targets = new float[OverlapModel.DATA_BATCHES][floats];
    for (int p = 0; p < OverlapModel.DATA_BATCHES; p++) {
      OverlapModel.samples(size.width(), OverlapModel.firstSample(p, ranks, rank, size.batch()), size.batch(),
          inputs[p], targets[p]);
    }
    this.dw = new float[size.width() * size.width()];
    this.db = new float[size.width()];
  }

  @Override
  public Stream stream() {
    return stream;
  }

  @Override
  public void forward(int step, GradPlan grads) {
    int p = Math.floorMod(step, OverlapModel.DATA_BATCHES);
    queue.submit(() -> grads.loss().set(0, layers.forward(inputs[p], targets[p])));
  }

  @Override
  public void gradients(int layer, GradPlan grads) {
    queue.submit(() -> {
      layers.gradients(layer, dw, db);
      grads.weight(layer).copyFrom(dw);
      grads.bias(layer).copyFrom(db);
    });
  }

  @Override
  public void propagate(int layer) {
    queue.submit(() -> layers.propagate(layer));
  }

  @Override
  public void update(GradPlan grads) {
    queue.submitAfterCommunication(() -> {
      for (int l = 0; l < layers.layers(); l++) {
        grads.weight(l).copyTo(dw);
        grads.bias(l).copyTo(db);
        layers.step(l, dw, db, OverlapModel.LR);
      }
    });
  }

  @Override
  public OverlapModel.Params params() {
    return layers.params();
  }

  @Override
  public void close() {
    // Nothing off-heap: the arrays go with the object.
  }

  @Override
  public String toString() {
    return "host compute of rank " + rank + " of " + ranks;
  }
}
