package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.U64Buffer;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Locale;

/**
 * Where one agreement check's time goes on NCCL (docs/reliability/agreement-cost.md): the parts of a
 * check done by hand with the check itself off, each timed alone (median of {@code reps} after as many
 * warm-ups): the host write of the staged header and records, the group of two all-gathers (in place, as
 * the window of 64 did it, and out of place from the staged copy, as now) with a synchronize, the read of
 * the headers, and a synchronize of an idle stream for reference. For records of 64 and 256 calls.
 *
 * <pre>
 *   .device/run dev.commplan.runtime.nccl.AgreementCheckProbe [reps]
 * </pre>
 */
public final class AgreementCheckProbe {
  private AgreementCheckProbe() {}

  public static void main(String[] args) {
    int reps = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    String why = NcclBackend.unavailableReason(1);
    if (why != null) {
      System.out.println("# AgreementCheckProbe skipped: " + why);
      return;
    }
    try (Cluster cluster = NcclBackend.cluster(1, CommOptions.defaults().withAgreementCheck(false))) {
      cluster.run(comm -> {
        for (int calls : new int[] {64, 256}) {
          probe(comm, calls, reps);
        }
      });
    }
  }

  private static void probe(Communicator comm, int calls, int reps) {
    int header = 4;
    int records = calls * 4;
    int ranks = comm.size();
    try (U64Buffer all = U64Buffer.allocate(comm, (ranks + 1L) * (header + records))) {
      U64Buffer headers = view(all, 0, (long) ranks * header);
      U64Buffer recs = view(all, (long) ranks * header, (long) ranks * records);
      long stagedAt = (long) ranks * (header + records);
      U64Buffer staged = view(all, stagedAt, header + records);
      U64Buffer stagedHeader = view(all, stagedAt, header);
      U64Buffer stagedRecords = view(all, stagedAt + header, records);
      U64Buffer ownHeader = view(all, (long) comm.rank() * header, header);
      U64Buffer ownRecords = view(all, (long) ranks * header + (long) comm.rank() * records, records);
      long[] mine = new long[header + records];
      MemorySegment mineSegment = MemorySegment.ofArray(mine);
      long[] read = new long[ranks * header];
      MemorySegment readSegment = MemorySegment.ofArray(read);
      print(calls, "host write of header + records (" + (mine.length * 8) + " B)", time(reps, () ->
          staged.memory().copyFromHost(mineSegment, 0, staged.byteOffset(), (long) mine.length * Long.BYTES)));
      print(calls, "group of 2 all-gathers in place + synchronize", time(reps, () -> {
        comm.groupStart();
        comm.allGather(ownHeader, headers, comm.stream());
        comm.allGather(ownRecords, recs, comm.stream());
        comm.groupEnd();
        comm.stream().synchronize();
      }));
      print(calls, "group of 2 all-gathers out of place (staged) + synchronize", time(reps, () -> {
        comm.groupStart();
        comm.allGather(stagedHeader, headers, comm.stream());
        comm.allGather(stagedRecords, recs, comm.stream());
        comm.groupEnd();
        comm.stream().synchronize();
      }));
      print(calls, "read of the headers (" + (read.length * 8) + " B)", time(reps, () ->
          headers.memory().copyToHost(headers.byteOffset(), readSegment, 0, (long) read.length * Long.BYTES)));
      print(calls, "synchronize of an idle stream (reference)", time(reps, () -> comm.stream().synchronize()));
    }
  }

  private static U64Buffer view(U64Buffer b, long fromLong, long longs) {
    return (U64Buffer) Buffer.view(DataType.U64, b.memory(), b.byteOffset() + fromLong * Long.BYTES, longs);
  }

  private static double[] time(int reps, Runnable body) {
    for (int i = 0; i < reps; i++) {
      body.run();
    }
    long[] t = new long[reps];
    for (int i = 0; i < reps; i++) {
      long t0 = System.nanoTime();
      body.run();
      t[i] = System.nanoTime() - t0;
    }
    Arrays.sort(t);
    return new double[] {t[reps / 2] / 1e3, t[0] / 1e3, t[(int) (reps * 0.9)] / 1e3};
  }

  private static void print(int calls, String what, double[] t) {
    System.out.printf(Locale.ROOT, "window of %d calls: %-60s median %8.2f us  min %8.2f  p90 %8.2f%n", calls, what,
        t[0], t[1], t[2]);
  }
}
