package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.mpi.internal.MpiCollectives;
import dev.commplan.runtime.mpi.internal.UserOps;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.HostMemoryBlock;
import dev.commplan.runtime.spi.OperationLabel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Steps of NCCL-style calls resolved once to MPI's non-blocking collectives: pointers, {@code int}
 * counts, {@code MPI_Datatype} and {@code MPI_Op} handles and roots in flat arrays, one {@code
 * MPI_Request} slot per call in native memory. {@link #start} issues a step's calls and {@link #test}
 * polls them; neither allocates on the Java heap. What a failed {@code MPI_Testall} says is read by {@link
 * MpiCallFailures}.
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
 *       (receives from) the same peer of the same group in the step, so that a step's pairs between two ranks are kept apart
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
  /** The plan's name, or null for the one call of a direct-call table ({@link #direct}). */
  final String planName;
  /** What a direct-call table's call is, for messages ({@link #setDirect}): "direct call", "agreement check". */
  private String directLabel;
  /** Whether a direct-call table's call is one of the agreement check's own ({@link #setDirect}). */
  private boolean directCheck;
  /** A plan table's steps as its flight record names them, made here once; null for a direct-call table. */
  private OperationLabel[] stepLabel;
  private final MpiCommunicator comm;
  private final int[] stepStart; // calls of step s are [stepStart[s], stepStart[s + 1])
  private final int[] stepNumber;
  private final int[] stepBucket; // each step's bucket (Step.bucket()), or -1
  private final int[] callStep; // the step index of each call
  private final MpiCommHandle[] over; // the MPI_Comm each call runs over: the plan's, or a mesh axis's
  private final int[] groupSize; // its size (AVG divides by it)
  private final String[] axis; // its axis, "" for the plan's own communicator
  private final Collective[] kind;
  private final DataType[] dataType;
  private final ReduceOp[] reduceOp;
  private final List<?>[] fields;
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
  private final MemorySegment[] scratch; // the scratch block a call may use (kept by a direct table, grown)
  private final boolean[] post;
  private final MemorySegment[] postTo;
  private final long[] postToOffset;
  // AVG: divide recv by the rank count after the call (and after the copy).
  private final DataType[] avgType;
  private final MemorySegment[] avgAt;
  private final long[] avgOffset;
  private final long[] bytes; // recv bytes of each call (for copies)
  private final MpiMemory[] memories;
  private final MemorySegment requests;
  private final MemorySegment statuses; // MPI_Testall's, read when it reports MPI_ERR_IN_STATUS
  private final boolean[] stepInFlight;
  int failedCode; // the MPI error of the call that start() could not start

  /**
   * A plan's table: every call of {@code schedule} resolved now, each over its group's communicator (the
   * plan's, {@code comm}, or a mesh axis's of the same family; {@link Schedule#communicatorOf}).
   */
  MpiCallTable(MpiCommunicator comm, Schedule schedule) {
    this(comm, schedule.planName(), schedule.steps().size(), countCalls(schedule.steps()));
    List<Step> steps = schedule.steps();
    int i = 0;
    for (int s = 0; s < steps.size(); s++) {
      Step step = steps.get(s);
      stepStart[s] = i;
      stepNumber[s] = step.number();
      stepBucket[s] = step.bucket();
      for (CollectiveCall call : step.calls()) {
        if (!call.transfers()) {
          continue; // a send or receive whose peer is none on this rank
        }
        int rootOrPeer = call.collective().pointToPoint() ? call.peer() : call.root();
        MpiCommunicator group = (MpiCommunicator) schedule.communicatorOf(call, comm); // checked: of comm's family
        set(i, s, group, schedule.axisOf(call), call.collective(), call.dataType(), call.op(), rootOrPeer,
            call.sendMemory(), call.sendByteOffset(), call.recvMemory(), call.recvByteOffset(), call.count(),
            call.fields());
        i++;
      }
    }
    stepStart[steps.size()] = i;
    stepLabel = stepLabels();
  }

  /** Each step's label: the plan, step, bucket, and the calls this rank issues in it, each with its arguments. */
  private OperationLabel[] stepLabels() {
    OperationLabel[] labels = new OperationLabel[steps()];
    for (int s = 0; s < labels.length; s++) {
      List<OperationLabel.Call> calls = new ArrayList<>();
      for (int i = stepStart[s]; i < stepStart[s + 1]; i++) {
        @SuppressWarnings("unchecked") // set from CollectiveCall.fields(), a List<String>
        List<String> callFields = (List<String>) fields[i];
        calls.add(OperationLabel.Call.of(kind[i], dataType[i], reduceOp[i], count[i], root[i], axis[i], callFields));
      }
      labels[s] = OperationLabel.ofCalls(planName, stepNumber[s], stepBucket[s], calls);
    }
    return labels;
  }

  /**
   * Records step {@code step}, just started at {@code nanos}, in {@code recorder}: a plan's by its label, a
   * direct call by its arguments (nothing is allocated); returns its sequence number there.
   */
  long record(int step, FlightRecorder recorder, long nanos) {
    long seq = planName == null
        ? recorder.enqueuedDirect(kind[0], dataType[0], reduceOp[0], count[0], root[0], directKind(),
            directLabel.equals(MpiDirectCalls.DIRECT) ? null : directLabel, recorder.stream(), nanos)
        : recorder.enqueued(stepLabel[step], nanos);
    recorder.started(seq, nanos); // MPI starts its non-blocking calls when they are issued
    return seq;
  }

  /**
   * What a direct-call table's call is to the other ranks' records: the agreement check's call, except the
   * comparison a close makes, which only ranks that close meet (over the check's own communicator, {@link
   * MpiCommPair}): a rank that closes while the others are still in their calls meets nobody there, so it takes
   * no number in the group's sequence ({@code LOCAL}); a send or receive; or a collective.
   */
  private OperationLabel.Kind directKind() {
    if (directCheck) {
      return directLabel.startsWith(MpiFamily.CHECK_AT_CLOSE) ? OperationLabel.Kind.LOCAL : OperationLabel.Kind.CHECK;
    }
    return kind[0].pointToPoint() ? OperationLabel.Kind.P2P : OperationLabel.Kind.COLLECTIVE;
  }

  /**
   * A table of one step of one call, for direct calls: {@link #setDirect} fills it again for each call, so a
   * direct call allocates nothing once its table exists (the communicator keeps a few, see {@link
   * MpiCommunicator}).
   */
  static MpiCallTable direct(MpiCommunicator comm) {
    MpiCallTable table = new MpiCallTable(comm, null, 1, 1);
    table.stepStart[1] = 1;
    return table;
  }

  private MpiCallTable(MpiCommunicator comm, String planName, int steps, int calls) {
    this.comm = comm;
    this.planName = planName;
    stepStart = new int[steps + 1];
    stepNumber = new int[steps];
    stepBucket = new int[steps];
    stepInFlight = new boolean[steps];
    callStep = new int[calls];
    over = new MpiCommHandle[calls];
    groupSize = new int[calls];
    axis = new String[calls];
    kind = new Collective[calls];
    dataType = new DataType[calls];
    reduceOp = new ReduceOp[calls];
    fields = new List<?>[calls];
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
    scratch = new MemorySegment[calls];
    post = new boolean[calls];
    postTo = new MemorySegment[calls];
    postToOffset = new long[calls];
    avgType = new DataType[calls];
    avgAt = new MemorySegment[calls];
    avgOffset = new long[calls];
    bytes = new long[calls];
    memories = new MpiMemory[2 * calls];
    Arena arena = Arena.ofAuto(); // requests and statuses live as long as the table
    requests = arena.allocate(JAVA_LONG, Math.max(1, calls));
    statuses = arena.allocate((long) Mpi.STATUS_BYTES * Math.max(1, calls), 8);
  }

  private static int countCalls(List<Step> steps) {
    int calls = 0;
    for (Step step : steps) {
      for (CollectiveCall call : step.calls()) {
        calls += call.transfers() ? 1 : 0;
      }
    }
    return calls;
  }

  /**
   * Fills this direct-call table's one call (a checked direct call: {@code root} is the root, a send's or
   * receive's peer, or -1); allocates nothing unless an in-place ReduceScatter needs a larger scratch block.
   * {@code label}: what messages call it; {@code check}: the agreement check's, over its own MPI_Comm ({@link MpiCommPair}).
   */
  void setDirect(Collective collective, Buffer sendBuffer, Buffer recvBuffer, long n, ReduceOp reduce, int rootOrPeer,
      String label, boolean check) {
    directLabel = label;
    directCheck = check;
    set(0, 0, comm, "", collective, sendBuffer.dataType(), reduce, rootOrPeer, sendBuffer.memory(),
        sendBuffer.byteOffset(), recvBuffer.memory(), recvBuffer.byteOffset(), n, List.of());
    over[0] = comm.commHandle(check);
  }

  /**
   * Resolves call {@code i} of step index {@code s}, over {@code group} (whose ranks its root, peer and slices
   * are), see the class comment for how each maps onto MPI.
   */
  private void set(int i, int s, MpiCommunicator group, String groupAxis, Collective collective, DataType dt,
      ReduceOp reduce, int rootOrPeer, DeviceMemory sendMemory, long sendOffset, DeviceMemory recvMemory,
      long recvOffset, long n, List<String> callFields) {
    int rank = group.rank();
    int ranks = group.size();
    callStep[i] = s;
    over[i] = group.commHandle(false);
    groupSize[i] = ranks;
    axis[i] = groupAxis;
    kind[i] = collective;
    dataType[i] = dt;
    reduceOp[i] = reduce;
    fields[i] = callFields;
    root[i] = rootOrPeer;
    count[i] = (int) Math.min(n, Integer.MAX_VALUE); // for messages until checked below
    MpiMemory sm = memory(sendMemory, i, "send");
    MpiMemory rm = memory(recvMemory, i, "recv");
    memories[2 * i] = sm;
    memories[2 * i + 1] = rm;
    if (n > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(describe(i) + ": count " + n + " is more than MPI's int count allows ("
          + Integer.MAX_VALUE + "); split the buffer into parts of at most that many elements");
    }
    count[i] = (int) n;
    long size = dt.byteSize();
    long sendBytes = n * collective.counts().sendCounts(ranks) * size;
    long recvBytes = n * collective.counts().recvCounts(ranks) * size;
    long sendAddress = sm.address() + sendOffset;
    long recvAddress = rm.address() + recvOffset;
    bytes[i] = recvBytes;
    boolean sameBlock = sm == rm;
    boolean overlap = sameBlock && sendOffset < recvOffset + recvBytes && recvOffset < sendOffset + sendBytes;
    boolean inPlace = sameBlock && switch (collective.inPlace()) {
      case SAME_BUFFER, ONE_BUFFER -> sendOffset == recvOffset;
      case SEND_IS_RANK_SLICE_OF_RECV -> sendOffset == recvOffset + rank * n * size;
      case RECV_IS_RANK_SLICE_OF_SEND -> recvOffset == sendOffset + rank * n * size;
      case NOT_ALLOWED -> false;
    };
    if (overlap && !inPlace) {
      throw new IllegalArgumentException(describe(i) + ": send and recv overlap on rank " + rank
          + " but are not NCCL's in-place arrangement");
    }
    boolean isRoot = collective.hasRoot() && rank == rootOrPeer;
    preFrom[i] = null;
    preTo[i] = null;
    post[i] = false;
    postTo[i] = null;
    send[i] = sendAddress;
    recv[i] = recvAddress;
    switch (collective) {
      case ALL_REDUCE, ALL_GATHER -> send[i] = inPlace ? Mpi.IN_PLACE : sendAddress;
      case REDUCE_SCATTER -> {
        if (inPlace) {
          if (scratch[i] == null || scratch[i].byteSize() < recvBytes) {
            scratch[i] = Arena.ofAuto().allocate(Math.max(recvBytes, 1), HostMemoryBlock.ALIGNMENT);
          }
          recv[i] = scratch[i].address();
          post[i] = true;
          postTo[i] = rm.segment();
          postToOffset[i] = recvOffset;
        }
      }
      case BROADCAST -> {
        send[i] = recvAddress;
        if (!inPlace && isRoot) {
          preFrom[i] = sm.segment();
          preFromOffset[i] = sendOffset;
          preTo[i] = rm.segment();
          preToOffset[i] = recvOffset;
        }
      }
      case REDUCE, GATHER -> send[i] = inPlace && isRoot ? Mpi.IN_PLACE : sendAddress;
      case SCATTER -> recv[i] = inPlace && isRoot ? Mpi.IN_PLACE : recvAddress;
      case ALL_TO_ALL, SEND, RECV -> { }
    }
    if (collective.pointToPoint()) {
      int earlier = 0; // the same kind to the same peer of the same group, earlier in this step
      for (int j = stepStart[s]; j < i; j++) {
        earlier += kind[j] == kind[i] && root[j] == root[i] && over[j] == over[i] ? 1 : 0;
      }
      tag[i] = 1 + earlier;
    }
    type[i] = MpiTypes.mpiType(dt, reduce);
    op[i] = reduce == null ? 0 : MpiTypes.mpiOp(dt, reduce, planName == null ? "a direct call" : planName);
    boolean average = reduce == ReduceOp.AVG && (collective != Collective.REDUCE || isRoot);
    avgType[i] = average ? dt : null;
    avgAt[i] = average ? rm.segment() : null;
    avgOffset[i] = recvOffset;
  }

  /** What call {@code i} is, for messages: its plan and step (or "direct call"), collective, type, fields, count. */
  String describe(int i) {
    Collective c = kind[i];
    String detail = (reduceOp[i] != null ? " " + reduceOp[i] : "") + (c.hasRoot() ? " root " + root[i] : "")
        + (c == Collective.SEND ? " to rank " + root[i] : "") + (c == Collective.RECV ? " from rank " + root[i] : "");
    String where = planName != null ? "plan " + planName + ", step " + stepNumber[callStep[i]]
        + (stepBucket[callStep[i]] >= 0 ? ", bucket " + stepBucket[callStep[i]] : "")
        : directLabel;
    String of = fields[i] == null || fields[i].isEmpty() ? "" : " of " + fields[i];
    String overAxis = axis[i] == null || axis[i].isEmpty() ? "" : " over " + axis[i];
    return String.format(Locale.ROOT, "%s: %s %s%s%s%s, count %d", where, c.label(), dataType[i], detail, overAxis, of,
        count[i]);
  }

  private MpiMemory memory(DeviceMemory memory, int i, String role) {
    if (!(memory instanceof MpiMemory mm) || !comm.sharesMemoryWith(memory.owner())) {
      throw new IllegalArgumentException(describe(i) + ": the " + role + " memory " + memory + " is not memory of "
          + comm + "'s family");
    }
    if (mm.isClosed()) {
      throw new IllegalStateException(describe(i) + ": the " + role + " memory " + memory + " is closed");
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
      if (m != null && m.isClosed()) {
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
  int start(int step) {
    stepInFlight[step] = true;
    long base = requests.address();
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      if (preFrom[i] != null) {
        MemorySegment.copy(preFrom[i], preFromOffset[i], preTo[i], preToOffset[i], bytes[i]);
      }
      long request = base + 8L * i;
      long group = over[i].value();
      int rc = switch (kind[i]) {
        case ALL_REDUCE -> MpiCollectives.MPI_Iallreduce(send[i], recv[i], count[i], type[i], op[i], group, request);
        case ALL_GATHER -> MpiCollectives.MPI_Iallgather(send[i], count[i], type[i], recv[i], count[i], type[i], group, request);
        case REDUCE_SCATTER -> MpiCollectives.MPI_Ireduce_scatter_block(send[i], recv[i], count[i], type[i], op[i], group, request);
        case BROADCAST -> MpiCollectives.MPI_Ibcast(recv[i], count[i], type[i], root[i], group, request);
        case REDUCE -> MpiCollectives.MPI_Ireduce(send[i], recv[i], count[i], type[i], op[i], root[i], group, request);
        case GATHER -> MpiCollectives.MPI_Igather(send[i], count[i], type[i], recv[i], count[i], type[i], root[i], group,
            request);
        case SCATTER -> MpiCollectives.MPI_Iscatter(send[i], count[i], type[i], recv[i], count[i], type[i], root[i], group,
            request);
        case ALL_TO_ALL -> MpiCollectives.MPI_Ialltoall(send[i], count[i], type[i], recv[i], count[i], type[i], group,
            request);
        case SEND -> MpiCollectives.MPI_Isend(send[i], count[i], type[i], root[i], tag[i], group, request);
        case RECV -> MpiCollectives.MPI_Irecv(recv[i], count[i], type[i], root[i], tag[i], group, request);
      };
      if (rc != Mpi.SUCCESS) {
        failedCode = rc;
        return i;
      }
      over[i].started();
    }
    return -1;
  }

  /** {@code MPI_Testall} over step {@code step}'s requests (the caller holds the MPI lock); returns the code. */
  int test(int step, long flagAddress) {
    int from = stepStart[step];
    return Mpi.MPI_Testall(stepStart[step + 1] - from, requests.address() + 8L * from, flagAddress,
        statuses.address() + (long) Mpi.STATUS_BYTES * from);
  }

  /** {@return where step {@code step}'s calls start in the table; they end where step {@code step + 1}'s start} */
  int stepStart(int step) {
    return stepStart[step];
  }

  /** {@return the collective of call {@code i}} */
  Collective kind(int i) {
    return kind[i];
  }

  /** {@return the {@code MPI_Datatype} handle of call {@code i}} */
  long type(int i) {
    return type[i];
  }

  /** {@return the count of call {@code i}} */
  int count(int i) {
    return count[i];
  }

  /** {@return {@code MPI_Status} number {@code i}, as {@code MPI_Testall} of the call's step left it} */
  MemorySegment status(int i) {
    return statuses.asSlice((long) Mpi.STATUS_BYTES * i, Mpi.STATUS_BYTES);
  }

  /** After step {@code step} completed: the in-place ReduceScatter copies and AVG's divisions. */
  void finish(int step) {
    stepInFlight[step] = false;
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      if (post[i]) {
        MemorySegment.copy(scratch[i], 0, postTo[i], postToOffset[i], bytes[i]);
      }
      if (avgType[i] != null) {
        MpiTypes.divide(avgType[i], avgAt[i], avgOffset[i], count[i], groupSize[i]);
      }
    }
  }

  /** MPI completed step {@code step}'s calls (the caller holds the MPI lock): their requests are freed. */
  void ended(int step) {
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      over[i].ended();
    }
  }

  /** Marks a step no longer in flight after a failure; its calls stay live ({@link MpiCommHandle}). */
  void abandon(int step) {
    stepInFlight[step] = false;
  }

  /** The MPI function call {@code index} starts with. */
  String function(int index) {
    return MpiTypes.startFunction(kind[index]);
  }

  /** The fields of step {@code step}'s calls, each once, in call order: what a timeout of the step names. */
  List<String> stepFields(int step) {
    Set<String> out = new LinkedHashSet<>();
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      if (fields[i] != null) {
        for (Object field : fields[i]) {
          out.add(field.toString());
        }
      }
    }
    return List.copyOf(out);
  }

  String describeStep(int step) {
    StringBuilder sb = new StringBuilder();
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      if (sb.length() > 0) {
        sb.append("; ");
      }
      sb.append(describe(i));
    }
    return sb.toString();
  }
}
