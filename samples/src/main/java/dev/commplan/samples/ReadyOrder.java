package dev.commplan.samples;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * When an overlapped step marks its gradients ready ({@link TrainStep.Mode#OVERLAPPED}): each field as soon
 * as the backward pass has produced it ({@link #AS_PRODUCED}, what a training loop does), or in an order
 * drawn by a rank's own seed ({@link #shuffled}): after each layer a random number of the fields produced
 * so far and not yet marked, picked at random, and the rest at the end, shuffled. Never before a field is
 * produced. Ranks that mark in different orders must still exchange the same buckets (the plan sends them
 * in one order on every rank), which the sample's test checks with this.
 */
final class ReadyOrder {
  /** Each field marked as soon as it is produced, in the order produced. */
  static final ReadyOrder AS_PRODUCED = new ReadyOrder(null);

  private final SplittableRandom random;
  private final List<OverlapGradsPlan.Field> pending = new ArrayList<>();

  private ReadyOrder(SplittableRandom random) {
    this.random = random;
  }

  /** An order of its own for each {@code seed}; one instance per rank (it keeps the fields not yet marked). */
  static ReadyOrder shuffled(long seed) {
    return new ReadyOrder(new SplittableRandom(seed));
  }

  /** The fields to mark now that {@code fields} were produced (in the order to mark them). */
  List<OverlapGradsPlan.Field> produced(List<OverlapGradsPlan.Field> fields) {
    if (random == null) {
      return fields; // nothing kept: AS_PRODUCED is shared by every rank
    }
    pending.addAll(fields);
    return take(random.nextInt(pending.size() + 1));
  }

  /** The fields produced but not yet marked, to mark at the end of the backward pass. */
  List<OverlapGradsPlan.Field> rest() {
    return random == null ? List.of() : take(pending.size());
  }

  private List<OverlapGradsPlan.Field> take(int count) {
    List<OverlapGradsPlan.Field> out = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      out.add(pending.remove(random.nextInt(pending.size())));
    }
    return out;
  }
}
