package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Pipeline-parallel training: a model of N layers, one per rank (stage s on rank s), trained with the
 * GPipe schedule. Each training step splits the batch into micro-batches; in the forward phase, at tick
 * t stage s runs micro-batch t - s and then every stage passes its output one stage on ({@link
 * PipelineHops} step 0); the backward phase runs the other way ({@link PipelineHops} step 1), each stage
 * accumulating its own layer's gradient; then each stage takes its own SGD step. The sample trains the
 * same model on one host, without any communication, and checks that the loss curve and every stage's
 * parameters agree.
 *
 * <p>Layer s maps {@link #WIDTH} inputs to {@link #WIDTH} outputs, {@code a = tanh(W x + b)}, the last
 * layer without the tanh; the loss is the mean squared error over the batch and the outputs. A stage's
 * parameters are one flat {@code float[]}: W row-major ({@code W[j][i]} at {@code j * WIDTH + i}), then b.
 */
final class PipelineSample {
  static final int WIDTH = 4;
  static final int MICRO_BATCH = 4;
  static final int MICRO_BATCHES = 4;
  static final int BATCH = MICRO_BATCH * MICRO_BATCHES;
  static final int STEPS = 30;
  static final float LR = 0.1f;
  static final int PARAMS = WIDTH * WIDTH + WIDTH;
  static final long INIT_SEED = 17L;
  /** Loss curve and parameters must agree this closely with the one-host model. */
  static final double TOLERANCE = 1e-5;

  /** Size of the synthetic data set; training step t uses samples t*BATCH .. t*BATCH + BATCH - 1, wrapping. */
  static final int DATA = 64;

  private static final float[][] X = new float[DATA][WIDTH];
  private static final float[][] Y = new float[DATA][WIDTH];

  static {
    // y = sin(A x), A a fixed random matrix, x ~ N(0, 1).
    Random random = new Random(20261203L);
    double[][] a = new double[WIDTH][WIDTH];
    for (double[] row : a) {
      for (int i = 0; i < WIDTH; i++) {
        row[i] = random.nextGaussian() / Math.sqrt(WIDTH);
      }
    }
    for (int s = 0; s < DATA; s++) {
      for (int i = 0; i < WIDTH; i++) {
        X[s][i] = (float) random.nextGaussian();
      }
      for (int j = 0; j < WIDTH; j++) {
        double dot = 0;
        for (int i = 0; i < WIDTH; i++) {
          dot += a[j][i] * X[s][i];
        }
        Y[s][j] = (float) Math.sin(dot);
      }
    }
  }

  private PipelineSample() {}

  /** What one stage ends with: the loss at every step (the last stage's; 0 elsewhere) and its layer's parameters. */
  record RankResult(float[] losses, float[] params) {
    /** Packed as floats for the MPI gather: the losses, then the parameters. */
    float[] pack() {
      float[] packed = Arrays.copyOf(losses, STEPS + PARAMS);
      System.arraycopy(params, 0, packed, STEPS, PARAMS);
      return packed;
    }

    static RankResult unpack(float[] packed) {
      return new RankResult(Arrays.copyOf(packed, STEPS), Arrays.copyOfRange(packed, STEPS, STEPS + PARAMS));
    }
  }

  /** The one-host model's loss curve and every layer's final parameters. */
  record Reference(float[] losses, float[][] params) {}

  /** Runs the pipeline on {@code ranks} stages, prints the report; returns whether it matches the one-host model. */
  static boolean run(String backend, int ranks, PrintStream out) {
    List<RankResult> results;
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      results = cluster.call(PipelineSample::trainStage);
    }
    return printAll(results, backend, out);
  }

  /** The sample as one rank of {@code MPI_COMM_WORLD}: rank 0 prints the report. */
  static boolean runMpi(int ranks, PrintStream out) {
    MpiWorld.Gathered world = MpiWorld.run(ranks, comm -> trainStage(comm).pack(), out);
    List<RankResult> results = new ArrayList<>();
    for (float[] packed : world.results()) {
      results.add(RankResult.unpack(packed));
    }
    return printAll(results, "mpi", world.out());
  }

  /** Ticks of each phase: the last micro-batch leaves the last of {@code stages} stages at tick M + S - 2. */
  static int ticks(int stages) {
    return MICRO_BATCHES + stages - 1;
  }

  /** One stage's training: {@link #STEPS} GPipe steps of its own layer. */
  static RankResult trainStage(Communicator comm) {
    int stage = comm.rank();
    int stages = comm.size();
    boolean last = stage == stages - 1;
    int ticks = ticks(stages);
    Stream stream = comm.stream();
    float[] params = init(stage);
    float[] grad = new float[PARAMS];
    float[] losses = new float[STEPS];
    // Per micro-batch, what the backward phase needs: the stage's input and its output.
    float[][] inputs = new float[MICRO_BATCHES][];
    float[][] outputs = new float[MICRO_BATCHES][];
    try (PipelineHopsPlan hops = PipelineHopsPlan.builder().batch(MICRO_BATCH).width(WIDTH).build(comm)) {
      for (int step = 0; step < STEPS; step++) {
        // Forward: at tick t, stage s runs micro-batch t - s, then every stage passes its output on.
        double loss = 0;
        for (int t = 0; t < ticks; t++) {
          int m = t - stage;
          if (m >= 0 && m < MICRO_BATCHES) {
            inputs[m] = stage == 0 ? inputs(step, m) : hops.activationsIn().toArray();
            outputs[m] = forward(params, inputs[m], last);
            if (last) {
              loss += squaredError(outputs[m], step, m);
            } else {
              hops.activationsOut().copyFrom(outputs[m]);
            }
          }
          if (t < ticks - 1) {
            hops.executeStep(0, stream); // activations to rank + 1 (none from the last stage)
            stream.synchronize();
          }
        }
        losses[step] = last ? (float) (loss / (BATCH * WIDTH)) : 0f;

        // Backward: at tick t, stage s runs micro-batch t - (S - 1 - s), then passes its input's gradient back.
        Arrays.fill(grad, 0f);
        for (int t = 0; t < ticks; t++) {
          int m = t - (stages - 1 - stage);
          if (m >= 0 && m < MICRO_BATCHES) {
            float[] dOut = last ? lossGradient(outputs[m], step, m) : hops.gradientsIn().toArray();
            hops.gradientsOut().copyFrom(backward(params, inputs[m], outputs[m], dOut, last, grad));
          }
          if (t < ticks - 1) {
            hops.executeStep(1, stream); // gradients to rank - 1 (none from the first stage)
            stream.synchronize();
          }
        }
        for (int i = 0; i < PARAMS; i++) {
          params[i] -= LR * grad[i];
        }
      }
    }
    return new RankResult(losses, params);
  }

  /** Layer {@code layer}'s initial parameters: Gaussian weights scaled by 1/sqrt(width), zero biases. */
  static float[] init(int layer) {
    Random random = new Random(INIT_SEED + layer);
    float[] p = new float[PARAMS];
    for (int i = 0; i < WIDTH * WIDTH; i++) {
      p[i] = (float) (random.nextGaussian() / Math.sqrt(WIDTH));
    }
    return p;
  }

  /** Data sample {@code k} of training step {@code step}'s batch. */
  private static int sample(int step, int k) {
    return Math.floorMod(step * BATCH + k, DATA);
  }

  /** Micro-batch {@code m}'s inputs at training step {@code step}: MICRO_BATCH rows of WIDTH. */
  static float[] inputs(int step, int m) {
    float[] x = new float[MICRO_BATCH * WIDTH];
    for (int k = 0; k < MICRO_BATCH; k++) {
      System.arraycopy(X[sample(step, m * MICRO_BATCH + k)], 0, x, k * WIDTH, WIDTH);
    }
    return x;
  }

  /** Micro-batch {@code m}'s targets at training step {@code step}: MICRO_BATCH rows of WIDTH. */
  static float[] targets(int step, int m) {
    float[] y = new float[MICRO_BATCH * WIDTH];
    for (int k = 0; k < MICRO_BATCH; k++) {
      System.arraycopy(Y[sample(step, m * MICRO_BATCH + k)], 0, y, k * WIDTH, WIDTH);
    }
    return y;
  }

  /** One stage's layer on a micro-batch: {@code tanh(W x + b)} per row, without the tanh on the last stage. */
  static float[] forward(float[] p, float[] x, boolean last) {
    float[] a = new float[MICRO_BATCH * WIDTH];
    for (int k = 0; k < MICRO_BATCH; k++) {
      for (int j = 0; j < WIDTH; j++) {
        double z = p[WIDTH * WIDTH + j];
        for (int i = 0; i < WIDTH; i++) {
          z += p[j * WIDTH + i] * x[k * WIDTH + i];
        }
        a[k * WIDTH + j] = (float) (last ? z : Math.tanh(z));
      }
    }
    return a;
  }

  /** The sum of squared errors of the last stage's outputs for micro-batch {@code m}. */
  private static double squaredError(float[] out, int step, int m) {
    double sum = 0;
    for (int k = 0; k < MICRO_BATCH; k++) {
      float[] y = Y[sample(step, m * MICRO_BATCH + k)];
      for (int j = 0; j < WIDTH; j++) {
        double e = out[k * WIDTH + j] - y[j];
        sum += e * e;
      }
    }
    return sum;
  }

  /** The gradient of the batch's mean squared error with respect to micro-batch {@code m}'s outputs. */
  private static float[] lossGradient(float[] out, int step, int m) {
    float[] d = new float[MICRO_BATCH * WIDTH];
    for (int k = 0; k < MICRO_BATCH; k++) {
      float[] y = Y[sample(step, m * MICRO_BATCH + k)];
      for (int j = 0; j < WIDTH; j++) {
        d[k * WIDTH + j] = (float) (2.0 * (out[k * WIDTH + j] - y[j]) / (BATCH * WIDTH));
      }
    }
    return d;
  }

  /**
   * One stage's backward pass on a micro-batch: adds its layer's gradient to {@code grad} and returns the
   * gradient with respect to its input (what goes to the previous stage).
   */
  static float[] backward(float[] p, float[] x, float[] a, float[] dOut, boolean last, float[] grad) {
    float[] dx = new float[MICRO_BATCH * WIDTH];
    for (int k = 0; k < MICRO_BATCH; k++) {
      for (int j = 0; j < WIDTH; j++) {
        float out = a[k * WIDTH + j];
        float dz = last ? dOut[k * WIDTH + j] : dOut[k * WIDTH + j] * (1 - out * out);
        grad[WIDTH * WIDTH + j] += dz;
        for (int i = 0; i < WIDTH; i++) {
          grad[j * WIDTH + i] += dz * x[k * WIDTH + i];
          dx[k * WIDTH + i] += dz * p[j * WIDTH + i];
        }
      }
    }
    return dx;
  }

  /**
   * The reference: the whole {@code layers}-layer model on one host, trained on whole batches (no
   * micro-batches, no stages, no communication), in double precision sample by sample.
   */
  static Reference reference(int layers) {
    double[][] p = new double[layers][PARAMS];
    for (int l = 0; l < layers; l++) {
      float[] init = init(l);
      for (int i = 0; i < PARAMS; i++) {
        p[l][i] = init[i];
      }
    }
    float[] losses = new float[STEPS];
    double[][] act = new double[layers + 1][WIDTH]; // act[0] the input, act[l + 1] layer l's output
    for (int step = 0; step < STEPS; step++) {
      double[][] g = new double[layers][PARAMS];
      double loss = 0;
      for (int k = 0; k < BATCH; k++) {
        int s = sample(step, k);
        for (int i = 0; i < WIDTH; i++) {
          act[0][i] = X[s][i];
        }
        for (int l = 0; l < layers; l++) {
          for (int j = 0; j < WIDTH; j++) {
            double z = p[l][WIDTH * WIDTH + j];
            for (int i = 0; i < WIDTH; i++) {
              z += p[l][j * WIDTH + i] * act[l][i];
            }
            act[l + 1][j] = l == layers - 1 ? z : Math.tanh(z);
          }
        }
        double[] d = new double[WIDTH];
        for (int j = 0; j < WIDTH; j++) {
          double e = act[layers][j] - Y[s][j];
          loss += e * e;
          d[j] = 2 * e / (BATCH * WIDTH);
        }
        for (int l = layers - 1; l >= 0; l--) {
          double[] dPrev = new double[WIDTH];
          for (int j = 0; j < WIDTH; j++) {
            double dz = l == layers - 1 ? d[j] : d[j] * (1 - act[l + 1][j] * act[l + 1][j]);
            g[l][WIDTH * WIDTH + j] += dz;
            for (int i = 0; i < WIDTH; i++) {
              g[l][j * WIDTH + i] += dz * act[l][i];
              dPrev[i] += dz * p[l][j * WIDTH + i];
            }
          }
          d = dPrev;
        }
      }
      losses[step] = (float) (loss / (BATCH * WIDTH));
      for (int l = 0; l < layers; l++) {
        for (int i = 0; i < PARAMS; i++) {
          p[l][i] -= LR * g[l][i];
        }
      }
    }
    float[][] params = new float[layers][PARAMS];
    for (int l = 0; l < layers; l++) {
      for (int i = 0; i < PARAMS; i++) {
        params[l][i] = (float) p[l][i];
      }
    }
    return new Reference(losses, params);
  }

  /**
   * Prints the set-up, the loss curve next to the one-host model's, each stage's parameters against the
   * one-host model's layer, and a check line; returns whether everything is within {@link #TOLERANCE}.
   */
  static boolean printAll(List<RankResult> results, String backend, PrintStream out) {
    int stages = results.size();
    int ticks = ticks(stages);
    out.printf(Locale.ROOT, "pipeline: %d %s on %s (stage s on rank s), %s backend; each stage one %dx%d layer"
            + " (tanh but the last), mean squared error, SGD lr %s, %d steps%n",
        stages, stages == 1 ? "stage" : "stages", LossTable.ranks(stages), backend, WIDTH, WIDTH, LR, STEPS);
    out.printf(Locale.ROOT, "GPipe schedule per step: batch %d = %d micro-batches x %d samples; forward %d ticks"
            + " with %d hops of step 0 (activations to rank + 1), backward %d ticks with %d hops of step 1"
            + " (gradients to rank - 1)%n",
        BATCH, MICRO_BATCHES, MICRO_BATCH, ticks, ticks - 1, ticks, ticks - 1);
    Reference reference = reference(stages);
    float[] losses = results.get(stages - 1).losses();
    LossTable.print(out, STEPS, "loss (pipeline)", losses, "loss (one host)", reference.losses());
    double worst = LossTable.maxDiff(losses, reference.losses());
    int wrong = worst <= TOLERANCE ? 0 : 1;
    for (int s = 0; s < stages; s++) {
      double diff = LossTable.maxDiff(results.get(s).params(), reference.params()[s]);
      boolean ok = diff <= TOLERANCE;
      wrong += ok ? 0 : 1;
      worst = Math.max(worst, diff);
      out.printf(Locale.ROOT, "stage %d (rank %d): %d parameters after %d steps, max |diff| vs one host %.1e  %s%n",
          s, s, PARAMS, STEPS, diff, ok ? "ok" : "WRONG");
    }
    if (wrong == 0) {
      out.printf(Locale.ROOT, "check: PASS, the loss curve and %s parameters match the one-host model"
          + " (max |diff| %.1e, tolerance %.0e)%n", stages == 1 ? "the stage's" : "all " + stages + " stages'", worst,
          TOLERANCE);
    } else {
      out.printf(Locale.ROOT, "check: FAILED, %d of %d results differ from the one-host model by more than %.0e"
          + " (max |diff| %.1e)%n", wrong, stages + 1, TOLERANCE, worst);
    }
    return wrong == 0;
  }
}
