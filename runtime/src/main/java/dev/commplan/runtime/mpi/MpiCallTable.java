package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.mpi.internal.MpiCollectives;
import dev.commplan.runtime.mpi.internal.UserOps;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.spi.HostMemoryBlock;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Steps of NCCL-style calls resolved once to MPI's non-blocking collectives: pointers, {@code int}
 * counts, {@code MPI_Datatype} and {@code MPI_Op} handles and roots in flat arrays, one {@code
 * MPI_Request} slot per call in native memory. {@link #start} issues a step's calls and {@link #test}
 * polls them; neither allocates on the Java heap.
 *
 * <p>Mapping NCCL's meaning onto MPI:
 *
 * <ul>
 *   <li>AllReduce: {@code MPI_Iallreduce}; in place with {@code MPI_IN_PLACE} as the send buffer.
 *   <li>AllGather: {@code MPI_Iallgather}; NCCL's in place (send is the rank-th slice of recv) is exactly
 *       MPI's {@code MPI_IN_PLACE}, which takes this rank's part from that slice.
 *   <li>ReduceScatter: {@code MPI_Ireduce_scatter_block}. NCCL's in place has recv be the rank-th slice of
 *       send, while MPI's {@code MPI_IN_PLACE} leaves the result at the start of the buffer (and may use
 *       the rest as scratch). So in place, the call reduces out of place into a scratch block of the
 *       table, and the completed result is copied into the rank-th slice: only recv is written, as on
 *       NCCL.
 *   <li>Broadcast: {@code MPI_Ibcast} on recv; out of place, the root first copies send into recv.
 *   <li>Reduce: {@code MPI_Ireduce}; in place, the root passes {@code MPI_IN_PLACE} as the send buffer
 *       (the other ranks' one buffer is their input). Only the root's recv is written (and divided, AVG).
 *   <li>Gather: {@code MPI_Igather}; NCCL's in place on the root (send is the root's slice of recv) is
 *       MPI's {@code MPI_IN_PLACE} as the root's send buffer.
 *   <li>Scatter: {@code MPI_Iscatter}; NCCL's in place on the root (recv is the root's slice of send) is
 *       MPI's {@code MPI_IN_PLACE} as the root's receive buffer.
 *   <li>AllToAll: {@code MPI_Ialltoall}, with NCCL's count per peer; out of place only.
 *   <li>Send, Recv: {@code MPI_Isend}, {@code MPI_Irecv}, with the tag 1 + the number of earlier sends to
 *       (receives from) the same peer in the step, so that a step's pairs between two ranks are kept apart
 *       whatever MPI's progress; both sides count the same, since every rank issues a step's transfers in
 *       the plan's pairing order. A transfer whose peer is none on this rank is not in the table.
 *   <li>Types: F32, F64 and the integers are MPI's fixed-size types. Signed SUM, PROD and AVG run on the
 *       unsigned type of the same width: two's-complement wrapping gives the same bits, and C leaves
 *       signed overflow undefined. 8-bit SUM, PROD and AVG use {@link UserOps}' wrapping ops, since Open
 *       MPI 4.1's AVX component saturates 8-bit sums. F16 and BF16 travel as {@code MPI_UINT16_T}, F8E4M3
 *       and F8E5M2 as {@code MPI_UINT8_T}, and reduce with {@link UserOps}' user ops ({@link MpiTypes}).
 *   <li>AVG is SUM, then a division by the rank count once the call completed: floating point in the
 *       type's arithmetic (16-bit types through float), integers as NCCL's SumPostDiv (the wrapped sum,
 *       divided truncating toward zero, unsigned for unsigned types).
 * </ul>
 */
final class MpiCallTable {
  final String planName;
  private final int ranks;
  private final int[] stepStart; // calls of step s are [stepStart[s], stepStart[s + 1])
  private final int[] stepNumber;
  private final Collective[] kind;
  private final long[] send;
  private final long[] recv;
  private final int[] count;
  private final long[] type;
  private final long[] op;
  private final int[] root; // the root, or a send's or receive's peer
  private final int[] tag; // a send's or receive's tag
  // Broadcast out of place, on the root: copy send into recv before the call.
  private final MemorySegment[] preFrom;
  private final long[] preFromOffset;
  private final MemorySegment[] preTo;
  private final long[] preToOffset;
  // ReduceScatter in place: copy the scratch result into recv after the call.
  private final MemorySegment[] postFrom;
  private final MemorySegment[] postTo;
  private final long[] postToOffset;
  // AVG: divide recv by the rank count after the call (and after the copy).
  private final DataType[] avgType;
  private final MemorySegment[] avgAt;
  private final long[] avgOffset;
  private final long[] bytes; // recv bytes of each call (for copies)
  private final String[] description;
  private final MpiMemory[] memories;
  private final MemorySegment requests;
  private final boolean[] stepInFlight;

  MpiCallTable(MpiCommunicator comm, String planName, List<Step> steps) {
    this.planName = planName;
    this.ranks = comm.size();
    int calls = 0;
    for (Step step : steps) {
      for (CollectiveCall call : step.calls()) {
        calls += call.transfers() ? 1 : 0;
      }
    }
    stepStart = new int[steps.size() + 1];
    stepNumber = new int[steps.size()];
    stepInFlight = new boolean[steps.size()];
    kind = new Collective[calls];
    send = new long[calls];
    recv = new long[calls];
    count = new int[calls];
    type = new long[calls];
    op = new long[calls];
    root = new int[calls];
    tag = new int[calls];
    preFrom = new MemorySegment[calls];
    preFromOffset = new long[calls];
    preTo = new MemorySegment[calls];
    preToOffset = new long[calls];
    postFrom = new MemorySegment[calls];
    postTo = new MemorySegment[calls];
    postToOffset = new long[calls];
    avgType = new DataType[calls];
    avgAt = new MemorySegment[calls];
    avgOffset = new long[calls];
    bytes = new long[calls];
    description = new String[calls];
    Arena arena = Arena.ofAuto(); // requests and scratch live as long as the table
    requests = arena.allocate(JAVA_LONG, Math.max(1, calls));
    Map<MpiMemory, MpiMemory> distinct = new IdentityHashMap<>();
    int i = 0;
    int rank = comm.rank();
    for (int s = 0; s < steps.size(); s++) {
      Step step = steps.get(s);
      stepStart[s] = i;
      stepNumber[s] = step.number();
      for (CollectiveCall call : step.calls()) {
        if (!call.transfers()) {
          continue; // a send or receive whose peer is none on this rank
        }
        String where = where(planName, step.number(), call);
        description[i] = where;
        MpiMemory sm = memory(comm, call.sendMemory(), where, "send");
        MpiMemory rm = memory(comm, call.recvMemory(), where, "recv");
        distinct.put(sm, sm);
        distinct.put(rm, rm);
        DataType dt = call.dataType();
        long size = dt.byteSize();
        if (call.count() > Integer.MAX_VALUE) {
          throw new IllegalArgumentException(where + ": count " + call.count() + " is more than MPI's int count"
              + " allows (" + Integer.MAX_VALUE + "); split the buffer into parts of at most that many elements");
        }
        count[i] = (int) call.count();
        long sendAddress = sm.address() + call.sendByteOffset();
        long recvAddress = rm.address() + call.recvByteOffset();
        long sendBytes = call.sendBytes(ranks);
        long recvBytes = call.recvBytes(ranks);
        bytes[i] = recvBytes;
        boolean sameBlock = sm == rm;
        boolean overlap = sameBlock && call.sendByteOffset() < call.recvByteOffset() + recvBytes
            && call.recvByteOffset() < call.sendByteOffset() + sendBytes;
        boolean inPlace = sameBlock && switch (call.collective().inPlace()) {
          case SAME_BUFFER, ONE_BUFFER -> call.sendByteOffset() == call.recvByteOffset();
          case SEND_IS_RANK_SLICE_OF_RECV -> call.sendByteOffset() == call.recvByteOffset() + rank * call.count() * size;
          case RECV_IS_RANK_SLICE_OF_SEND -> call.recvByteOffset() == call.sendByteOffset() + rank * call.count() * size;
          case NOT_ALLOWED -> false;
        };
        if (overlap && !inPlace) {
          throw new IllegalArgumentException(where + ": send and recv overlap on rank " + rank
              + " but are not NCCL's in-place arrangement");
        }
        ReduceOp reduce = call.op();
        root[i] = call.collective().pointToPoint() ? call.peer() : call.root();
        kind[i] = call.collective();
        boolean isRoot = call.collective().hasRoot() && rank == call.root();
        switch (call.collective()) {
          case ALL_REDUCE -> {
            send[i] = inPlace ? Mpi.IN_PLACE : sendAddress;
            recv[i] = recvAddress;
          }
          case ALL_GATHER -> {
            send[i] = inPlace ? Mpi.IN_PLACE : sendAddress;
            recv[i] = recvAddress;
          }
          case REDUCE_SCATTER -> {
            send[i] = sendAddress;
            if (inPlace) {
              MemorySegment scratch = arena.allocate(Math.max(recvBytes, 1), HostMemoryBlock.ALIGNMENT);
              recv[i] = scratch.address();
              postFrom[i] = scratch;
              postTo[i] = rm.segment();
              postToOffset[i] = call.recvByteOffset();
            } else {
              recv[i] = recvAddress;
            }
          }
          case BROADCAST -> {
            send[i] = recvAddress;
            recv[i] = recvAddress;
            if (!inPlace && rank == call.root()) {
              preFrom[i] = sm.segment();
              preFromOffset[i] = call.sendByteOffset();
              preTo[i] = rm.segment();
              preToOffset[i] = call.recvByteOffset();
            }
          }
          case REDUCE, GATHER -> {
            send[i] = inPlace && isRoot ? Mpi.IN_PLACE : sendAddress;
            recv[i] = recvAddress;
          }
          case SCATTER -> {
            send[i] = sendAddress;
            recv[i] = inPlace && isRoot ? Mpi.IN_PLACE : recvAddress;
          }
          case ALL_TO_ALL, SEND, RECV -> {
            send[i] = sendAddress;
            recv[i] = recvAddress;
          }
        }
        if (call.collective().pointToPoint()) {
          int earlier = 0; // the same kind to the same peer, earlier in this step
          for (int j = stepStart[s]; j < i; j++) {
            earlier += kind[j] == kind[i] && root[j] == root[i] ? 1 : 0;
          }
          tag[i] = 1 + earlier;
        }
        type[i] = MpiTypes.mpiType(dt, reduce);
        op[i] = reduce == null ? 0 : MpiTypes.mpiOp(dt, reduce, where);
        if (reduce == ReduceOp.AVG && (call.collective() != Collective.REDUCE || isRoot)) {
          avgType[i] = dt;
          avgAt[i] = rm.segment();
          avgOffset[i] = call.recvByteOffset();
        }
        i++;
      }
    }
    stepStart[steps.size()] = i;
    memories = new ArrayList<>(distinct.values()).toArray(new MpiMemory[0]);
  }

  private static String where(String planName, int step, CollectiveCall call) {
    String detail = (call.op() != null ? " " + call.op() : "") + (call.collective().hasRoot() ? " root " + call.root() : "")
        + (call.collective() == Collective.SEND ? " to rank " + call.peer() : "")
        + (call.collective() == Collective.RECV ? " from rank " + call.peer() : "");
    String fields = call.fields().isEmpty() ? "" : " of " + call.fields();
    return String.format(Locale.ROOT, "plan %s, step %d: %s %s%s%s, count %d", planName, step,
        call.collective().label(), call.dataType(), detail, fields, call.count());
  }

  private static MpiMemory memory(MpiCommunicator comm, DeviceMemory memory, String where, String role) {
    if (!(memory instanceof MpiMemory mm) || memory.owner() != comm) {
      throw new IllegalArgumentException(where + ": the " + role + " memory " + memory + " is not memory of " + comm);
    }
    if (mm.isClosed()) {
      throw new IllegalStateException(where + ": the " + role + " memory " + memory + " is closed");
    }
    return mm;
  }

  int steps() {
    return stepNumber.length;
  }

  int stepNumber(int step) {
    return stepNumber[step];
  }

  /** Throws if a block the table points into was freed after it was made. */
  void checkMemory() {
    for (MpiMemory m : memories) {
      if (m.isClosed()) {
        throw new IllegalStateException(planName + ": " + m + " was freed after the schedule was compiled");
      }
    }
  }

  boolean inFlight(int step) {
    return stepInFlight[step];
  }

  /**
   * Starts step {@code step}'s calls (the caller holds the MPI lock and has completed what they depend on).
   *
   * @return -1 when all started, else the index of the call that failed, whose code {@link #failedCode} has
   */
  int start(long comm, int step) {
    stepInFlight[step] = true;
    long base = requests.address();
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      if (preFrom[i] != null) {
        MemorySegment.copy(preFrom[i], preFromOffset[i], preTo[i], preToOffset[i], bytes[i]);
      }
      long request = base + 8L * i;
      int rc = switch (kind[i]) {
        case ALL_REDUCE -> MpiCollectives.MPI_Iallreduce(send[i], recv[i], count[i], type[i], op[i], comm, request);
        case ALL_GATHER -> MpiCollectives.MPI_Iallgather(send[i], count[i], type[i], recv[i], count[i], type[i], comm, request);
        case REDUCE_SCATTER -> MpiCollectives.MPI_Ireduce_scatter_block(send[i], recv[i], count[i], type[i], op[i], comm, request);
        case BROADCAST -> MpiCollectives.MPI_Ibcast(recv[i], count[i], type[i], root[i], comm, request);
        case REDUCE -> MpiCollectives.MPI_Ireduce(send[i], recv[i], count[i], type[i], op[i], root[i], comm, request);
        case GATHER -> MpiCollectives.MPI_Igather(send[i], count[i], type[i], recv[i], count[i], type[i], root[i], comm,
            request);
        case SCATTER -> MpiCollectives.MPI_Iscatter(send[i], count[i], type[i], recv[i], count[i], type[i], root[i], comm,
            request);
        case ALL_TO_ALL -> MpiCollectives.MPI_Ialltoall(send[i], count[i], type[i], recv[i], count[i], type[i], comm,
            request);
        case SEND -> MpiCollectives.MPI_Isend(send[i], count[i], type[i], root[i], tag[i], comm, request);
        case RECV -> MpiCollectives.MPI_Irecv(recv[i], count[i], type[i], root[i], tag[i], comm, request);
      };
      if (rc != Mpi.SUCCESS) {
        failedCode = rc;
        return i;
      }
    }
    return -1;
  }

  int failedCode;

  /** {@code MPI_Testall} over step {@code step}'s requests (the caller holds the MPI lock); returns the code. */
  int test(int step, long flagAddress) {
    int from = stepStart[step];
    return Mpi.MPI_Testall(stepStart[step + 1] - from, requests.address() + 8L * from, flagAddress,
        Mpi.STATUSES_IGNORE);
  }

  /** After step {@code step} completed: the in-place ReduceScatter copies and AVG's divisions. */
  void finish(int step) {
    stepInFlight[step] = false;
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      if (postFrom[i] != null) {
        MemorySegment.copy(postFrom[i], 0, postTo[i], postToOffset[i], bytes[i]);
      }
      if (avgType[i] != null) {
        MpiTypes.divide(avgType[i], avgAt[i], avgOffset[i], count[i], ranks);
      }
    }
  }

  /** Marks a step no longer in flight after a failure. */
  void abandon(int step) {
    stepInFlight[step] = false;
  }

  /** The MPI function call {@code index} starts with. */
  String function(int index) {
    return switch (kind[index]) {
      case ALL_REDUCE -> "MPI_Iallreduce";
      case ALL_GATHER -> "MPI_Iallgather";
      case REDUCE_SCATTER -> "MPI_Ireduce_scatter_block";
      case BROADCAST -> "MPI_Ibcast";
      case REDUCE -> "MPI_Ireduce";
      case GATHER -> "MPI_Igather";
      case SCATTER -> "MPI_Iscatter";
      case ALL_TO_ALL -> "MPI_Ialltoall";
      case SEND -> "MPI_Isend";
      case RECV -> "MPI_Irecv";
    };
  }

  String describe(int index) {
    return description[index];
  }

  String describeStep(int step) {
    StringBuilder sb = new StringBuilder();
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      if (sb.length() > 0) {
        sb.append("; ");
      }
      sb.append(description[i]);
    }
    return sb.toString();
  }
}
