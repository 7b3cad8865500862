package dev.commplan.samples;

import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * The gradients of the {@code overlap} sample's model ({@link OverlapModel}): a loss and, for each of its
 * 16 linear layers, a weight gradient ({@code width x width}) and a bias gradient ({@code width}), all
 * averaged over the data-parallel ranks in place. Declared in forward order, so that the backward pass,
 * which produces the last layer's gradients first, produces them in reverse declaration order. The loss
 * rides along (every rank then holds the global batch's loss, which the check compares); it is declared
 * first, so it goes out with the first layer's gradients. With {@code bucketBytes}, the plan cuts them into
 * buckets, last-declared first, which the backward pass marks ready layer by layer ({@link TrainStep}).
 * Generates {@link OverlapGradsPlan}.
 */
@CommPlan(dims = {"width"}, bucketBytes = OverlapGrads.BUCKET_BYTES)
final class OverlapGrads {
  /**
   * Buckets of at most 16 MiB: three layers of 1024 (4 MiB a weight gradient) each, the GPU's measured
   * model. A guess until the sweep on GPUs; the builder's bucketBytes(long) overrides it per build.
   */
  static final long BUCKET_BYTES = 16L << 20;

  /** This rank's mean loss; afterwards, the global batch's. */
  @AllReduce(op = ReduceOp.AVG)
  @Shape("1")
  F32Buffer loss;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w0;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b0;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w1;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b1;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w2;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b2;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w3;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b3;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w4;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b4;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w5;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b5;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w6;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b6;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w7;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b7;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w8;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b8;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w9;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b9;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w10;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b10;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w11;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b11;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w12;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b12;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w13;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b13;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w14;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b14;

  @AllReduce(op = ReduceOp.AVG)
  @Shape({"width", "width"})
  F32Buffer w15;

  @AllReduce(op = ReduceOp.AVG)
  @Shape("width")
  F32Buffer b15;
}
