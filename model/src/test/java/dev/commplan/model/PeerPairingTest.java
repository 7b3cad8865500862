package dev.commplan.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class PeerPairingTest {
  /** A send or receive as the pairing sees it: a name, its step, its peer and its data (type and count). */
  private record T(String name, int step, Peer peer, String data) {}

  private static PeerPairing<T> pair(List<T> sends, List<T> recvs) {
    return PeerPairing.of(sends, recvs, T::step, T::peer, (s, r) -> s.data().equals(r.data()));
  }

  private static List<String> names(List<T> ts) {
    return ts.stream().map(T::name).toList();
  }

  @Test
  void aSendTakesTheFirstFreeReceiveOfItsStepFromTheInversePeer() {
    T s1 = new T("s1", 0, Peer.parse("rank + 1"), "f32 n");
    T s2 = new T("s2", 0, Peer.parse("rank + 1"), "f32 n");
    T r1 = new T("r1", 0, Peer.parse("rank - 1"), "f32 n");
    T r2 = new T("r2", 0, Peer.parse("rank - 1"), "f32 n");
    PeerPairing<T> p = pair(List.of(s1, s2), List.of(r1, r2));
    assertEquals(List.of(new PeerPairing.Pair<>(s1, r1), new PeerPairing.Pair<>(s2, r2)), p.pairs());
    assertEquals(List.of(), p.unmatched());
  }

  @Test
  void stepsDataAndWrappingKeepTransfersApart() {
    T send = new T("send", 0, Peer.parse("(rank + 1) % ranks"), "f32 n");
    T otherStep = new T("otherStep", 1, Peer.parse("(rank - 1) % ranks"), "f32 n");
    T otherData = new T("otherData", 0, Peer.parse("(rank - 1) % ranks"), "f64 n");
    T unwrapped = new T("unwrapped", 0, Peer.parse("rank - 1"), "f32 n");
    T samePeer = new T("samePeer", 0, Peer.parse("(rank + 1) % ranks"), "f32 n");
    PeerPairing<T> p = pair(List.of(send), List.of(otherStep, otherData, unwrapped, samePeer));
    assertEquals(List.of(), p.pairs());
    assertEquals(List.of("send", "otherStep", "otherData", "unwrapped", "samePeer"), names(p.unmatched()));
  }

  @Test
  void aSelfTransferPairsWhicheverSignItIsWrittenWith() {
    T send = new T("send", 0, Peer.parse("rank + 0"), "x");
    T recv = new T("recv", 0, Peer.parse("rank - 0"), "x");
    assertEquals(List.of(new PeerPairing.Pair<>(send, recv)), pair(List.of(send), List.of(recv)).pairs());
    T recvPlus = new T("recvPlus", 0, Peer.parse("rank + 0"), "x");
    assertEquals(List.of(new PeerPairing.Pair<>(send, recvPlus)), pair(List.of(send), List.of(recvPlus)).pairs());
  }
}
