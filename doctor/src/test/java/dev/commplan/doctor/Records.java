package dev.commplan.doctor;

import dev.commplan.doctor.FlightRecord.Call;
import dev.commplan.doctor.FlightRecord.Group;
import dev.commplan.doctor.FlightRecord.Kind;
import dev.commplan.doctor.FlightRecord.Operation;
import dev.commplan.doctor.FlightRecord.State;
import java.nio.file.Path;
import java.util.List;

/** Records built in code, for the analysis's cases that fixtures would only bury. */
final class Records {
  private Records() {}

  static final long MS = 1_000_000;

  /** {@code plan p.Sum, step 0, all-reduce F32 SUM, count 16, fields [x]} at {@code seq}. */
  static Operation sum(long seq, State state, Long waited) {
    return op(seq, Kind.COLLECTIVE, "p.Sum", 0, state, waited, allReduce(null, null));
  }

  static Operation op(long seq, Kind kind, String plan, int step, State state, Long waited, Call... calls) {
    long t = 1_000 * MS + seq * 10 * MS;
    boolean ended = state == State.COMPLETED || state == State.FAILED;
    return new Operation(seq, kind, plan, step, -1, List.of(calls), "(text)", "stream 0", state, t, t + MS,
        ended ? t + 2 * MS : null, waited);
  }

  static Call allReduce(Integer peer, String over) {
    return new Call(peer == null ? "all-reduce" : "send", "F32", peer == null ? "SUM" : null, 16L, null, peer, over,
        List.of("x"));
  }

  static Group group(String label, List<Integer> ranks, int worldRank, long nextSeq, Operation... ops) {
    return new Group(label, ranks, ranks.indexOf(worldRank), nextSeq, List.of(ops));
  }

  static FlightRecord file(int rank, int size, Group... groups) {
    return new FlightRecord(Path.of("rank-" + rank + ".json"), "job", "local", rank, size, "host", 1, "on demand",
        0, 2_000 * MS, List.of(groups));
  }

  static RecordFolder.Run run(FlightRecord... files) {
    return new RecordFolder.Run(Path.of("dir"), "job", "local", List.of(files));
  }

  static List<GroupAnalysis> analyse(FlightRecord... files) {
    return Diagnosis.of(run(files), 10 * MS).groups();
  }
}
