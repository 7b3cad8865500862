package dev.commplan.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.ToIntFunction;

/**
 * Rule 18, once for the processor (fields, counts as symbols) and the runtime (declared buffers, counts
 * as numbers): how a plan's sends and receives pair up. Within each step, each send, in the order given
 * (declaration order), takes the first receive of that step not yet taken, in the order given, whose
 * peer is the send's {@linkplain Peer#inverse() inverse} and whose data (type and count, as the caller
 * compares them) is the send's. What is left over is unmatched ({@link RuleId#UNMATCHED_PEER}).
 *
 * <p>Self-transfers pair like any other: {@code rank + 0} equals {@code rank - 0} ({@link Peer#equals}),
 * so a send to {@code rank + 0} takes a receive from either spelling.
 *
 * @param <T> what the caller pairs (a field's annotation, a declared call)
 * @param pairs the pairs, in the order of their sends
 * @param unmatched sends and receives without a partner, sends first, each in the order given
 */
public record PeerPairing<T>(List<Pair<T>> pairs, List<T> unmatched) {
  /**
   * A pairing; both lists are copied.
   *
   * @param pairs the pairs, in the order of their sends
   * @param unmatched sends and receives without a partner
   */
  public PeerPairing {
    pairs = List.copyOf(pairs);
    unmatched = List.copyOf(unmatched);
  }

  /**
   * A send and the receive it pairs with.
   *
   * @param <T> what the caller pairs
   * @param send the send
   * @param recv the receive whose peer is the send's inverse, in the same step, with the same data
   */
  public record Pair<T>(T send, T recv) {}

  /**
   * Pairs {@code sends} with {@code recvs} (each in declaration order; steps are kept apart by {@code
   * step}).
   *
   * @param <T> what the caller pairs
   * @param sends the sends, in declaration order
   * @param recvs the receives, in declaration order
   * @param step the step of a send or receive
   * @param peer the peer of a send or receive, as written
   * @param sameData whether a send and a receive carry the same data type and count
   * @return the pairs and what is left unmatched
   */
  public static <T> PeerPairing<T> of(List<T> sends, List<T> recvs, ToIntFunction<? super T> step,
      Function<? super T, Peer> peer, BiPredicate<? super T, ? super T> sameData) {
    Objects.requireNonNull(sameData, "sameData");
    List<Pair<T>> pairs = new ArrayList<>();
    List<T> unmatched = new ArrayList<>();
    boolean[] taken = new boolean[recvs.size()];
    for (T send : sends) {
      Peer wanted = peer.apply(send).inverse();
      int found = -1;
      for (int i = 0; i < recvs.size() && found < 0; i++) {
        T recv = recvs.get(i);
        if (!taken[i] && step.applyAsInt(recv) == step.applyAsInt(send) && peer.apply(recv).equals(wanted)
            && sameData.test(send, recv)) {
          found = i;
        }
      }
      if (found < 0) {
        unmatched.add(send);
      } else {
        taken[found] = true;
        pairs.add(new Pair<>(send, recvs.get(found)));
      }
    }
    for (int i = 0; i < recvs.size(); i++) {
      if (!taken[i]) {
        unmatched.add(recvs.get(i));
      }
    }
    return new PeerPairing<>(pairs, unmatched);
  }
}
