package dev.commplan.runtime.nccl;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.nccl.binding.NcclEnums;
import dev.commplan.runtime.nccl.binding.NcclTypeSupport;
import dev.commplan.runtime.nccl.calls.SendRecvStandIns;
import dev.commplan.runtime.nccl.memory.NcclMemory;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A schedule resolved once to NCCL's arguments, for {@link NcclCompiledSchedule}: per downcall the
 * function, device pointers (block address plus byte offset, so in-place calls get NCCL's in-place
 * pointers), count, {@code ncclDataType_t}, {@code ncclRedOp_t}, root or peer, and the {@code ncclComm_t}
 * it is issued on, in flat primitive arrays; per step the range of its downcalls and its label.
 *
 * <p>A call over a mesh's axis ({@code schedule.communicatorOf(call, comm)}) is issued on that axis's
 * communicator, with ranks (root, peer) of that group; Gather, Scatter and AllToAll that become sends and
 * receives ({@link SendRecvStandIns#viaSendRecv}) use that group's rank and size. Sends and receives whose peer
 * is none on this rank issue nothing.
 */
final class NcclDowncalls {
  final int[] stepStart; // downcalls of step i are [stepStart[i], stepStart[i + 1])
  final int[] stepNumber;
  final OperationLabel[] stepLabel; // plan, step, its calls (and axes) and fields: for the flight record
  final String[][] notes; // per step and call of the schedule: how it is issued (callNote), or null
  final Collective[] kind;
  final long[] send;
  final long[] recv;
  final long[] count;
  final int[] dataType;
  final int[] op; // ncclRedOp_t, for reductions
  final int[] rootOrPeer; // the root, or a send's or receive's peer, a rank of the call's group
  final long[] comm; // the ncclComm_t each downcall is issued on
  final NcclMemory[] memories; // distinct blocks, checked open before each enqueue
  /** The communicators of the schedule's groups other than the compiling one (a mesh's axes), distinct. */
  final NcclCommunicator[] groups;

  private NcclDowncalls(Builder b, NcclMemory[] memories, NcclCommunicator[] groups) {
    int n = b.size;
    this.stepStart = b.stepStart;
    this.stepNumber = b.stepNumber;
    this.stepLabel = b.stepLabel;
    this.notes = b.notes;
    this.kind = Arrays.copyOf(b.kind, n);
    this.send = Arrays.copyOf(b.send, n);
    this.recv = Arrays.copyOf(b.recv, n);
    this.count = Arrays.copyOf(b.count, n);
    this.dataType = Arrays.copyOf(b.dataType, n);
    this.op = Arrays.copyOf(b.op, n);
    this.rootOrPeer = Arrays.copyOf(b.rootOrPeer, n);
    this.comm = Arrays.copyOf(b.comm, n);
    this.memories = memories;
    this.groups = groups;
  }

  /** The downcalls as they are made at compile time, in arrays that grow. */
  private static final class Builder {
    final int[] stepStart;
    final int[] stepNumber;
    final OperationLabel[] stepLabel;
    final String[][] notes;
    Collective[] kind = new Collective[16];
    long[] send = new long[16];
    long[] recv = new long[16];
    long[] count = new long[16];
    int[] dataType = new int[16];
    int[] op = new int[16];
    int[] rootOrPeer = new int[16];
    long[] comm = new long[16];
    int size;

    Builder(int steps) {
      stepStart = new int[steps + 1];
      stepNumber = new int[steps];
      stepLabel = new OperationLabel[steps];
      notes = new String[steps][];
    }

    void add(Collective k, long s, long r, long n, int type, int reduction, int rootOrPeerRank, long handle) {
      if (size == kind.length) {
        int grown = size * 2;
        kind = Arrays.copyOf(kind, grown);
        send = Arrays.copyOf(send, grown);
        recv = Arrays.copyOf(recv, grown);
        count = Arrays.copyOf(count, grown);
        dataType = Arrays.copyOf(dataType, grown);
        op = Arrays.copyOf(op, grown);
        rootOrPeer = Arrays.copyOf(rootOrPeer, grown);
        comm = Arrays.copyOf(comm, grown);
      }
      kind[size] = k;
      send[size] = s;
      recv[size] = r;
      count[size] = n;
      dataType[size] = type;
      op[size] = reduction;
      rootOrPeer[size] = rootOrPeerRank;
      comm[size] = handle;
      size++;
    }
  }

  /** Resolves {@code schedule} (checked by {@code AbstractCommunicator.compile}) for {@code owner}, which compiles it. */
  static NcclDowncalls of(NcclCommunicator owner, Schedule schedule) {
    String planName = schedule.planName();
    List<Step> steps = schedule.steps();
    Builder out = new Builder(steps.size());
    Map<DeviceMemory, NcclMemory> distinct = new IdentityHashMap<>();
    Set<NcclCommunicator> groups = new LinkedHashSet<>();
    for (int s = 0; s < steps.size(); s++) {
      Step step = steps.get(s);
      out.stepStart[s] = out.size;
      out.stepNumber[s] = step.number();
      out.stepLabel[s] = label(planName, schedule, step);
      out.notes[s] = new String[step.calls().size()];
      for (int c = 0; c < step.calls().size(); c++) {
        CollectiveCall call = step.calls().get(c);
        String axis = schedule.axisOf(call);
        String where = planName + ", step " + step.number() + ", " + call.collective().label()
            + (axis.isEmpty() ? "" : " over " + axis) + " of " + call.fields();
        NcclCommunicator over = group(owner, schedule.communicatorOf(call, owner), where);
        if (over != owner) {
          groups.add(over);
        }
        NcclMemory sm = memory(owner, call.sendMemory(), where, "send");
        NcclMemory rm = memory(owner, call.recvMemory(), where, "recv");
        distinct.put(sm, sm);
        distinct.put(rm, rm);
        NcclTypeSupport.require(owner.ncclVersion(), call.dataType(), call.op(), true);
        Collective collective = call.collective();
        long sendAt = sm.rawAddress() + call.sendByteOffset();
        long recvAt = rm.rawAddress() + call.recvByteOffset();
        int type = NcclEnums.dataType(call.dataType());
        int op = call.op() == null ? 0 : NcclEnums.op(call.op());
        long handle = over.handle();
        if (collective.pointToPoint()) {
          if (call.peer() >= 0) { // a peer outside the ranks: no call on this rank
            out.add(collective, sendAt, recvAt, call.count(), type, 0, call.peer(), handle);
          }
          continue;
        }
        if (collective == Collective.GATHER || collective == Collective.SCATTER || collective == Collective.ALL_TO_ALL) {
          out.notes[s][c] = SendRecvStandIns.path(collective);
        }
        if (SendRecvStandIns.isNative(collective)) {
          out.add(collective, sendAt, recvAt, call.count(), type, op, collective.hasRoot() ? call.root() : 0, handle);
        } else {
          SendRecvStandIns.viaSendRecv(collective, sendAt, recvAt, call.count() * call.dataType().byteSize(), call.root(),
              over.rank(), over.size(), (isSend, pointer, peer) -> out.add(isSend ? Collective.SEND : Collective.RECV,
                  pointer, pointer, call.count(), type, 0, peer, handle));
        }
      }
    }
    out.stepStart[steps.size()] = out.size;
    return new NcclDowncalls(out, new ArrayList<>(distinct.values()).toArray(new NcclMemory[0]),
        groups.toArray(new NcclCommunicator[0]));
  }

  /** The number of NCCL calls one enqueue of the whole schedule issues. */
  int size() {
    return kind.length;
  }

  /**
   * The communicator a call runs over, as this backend's: the compiling one, or one of its family
   * (checked by {@code AbstractCommunicator.compile}, which asked {@code sharesMemoryWith}; checked again here).
   */
  private static NcclCommunicator group(NcclCommunicator owner, Communicator over, String where) {
    if (over instanceof NcclCommunicator nc && (nc == owner || nc.sharesMemoryWith(owner))) {
      return nc;
    }
    throw new IllegalArgumentException(where + ": it runs over " + over + ", which is not a communicator of "
        + owner + "'s family (a mesh's world and its axes, split from one communicator of this rank)");
  }

  private static NcclMemory memory(NcclCommunicator owner, DeviceMemory memory, String where, String role) {
    if (!(memory instanceof NcclMemory nm) || !owner.sharesMemoryWith(memory.owner())) {
      throw new IllegalArgumentException(where + ": the " + role + " memory " + memory + " is not memory of "
          + owner + " or of its family");
    }
    if (nm.isClosed()) {
      throw new IllegalStateException(where + ": the " + role + " memory " + memory + " is closed");
    }
    return nm;
  }

  /** {@code plan p.X, step 0, all-reduce over tp F32 SUM, count 16 + all-gather F32, count 4, fields [a, b]}. */
  private static OperationLabel label(String planName, Schedule schedule, Step step) {
    List<String> calls = new ArrayList<>();
    List<String> fields = new ArrayList<>();
    for (CollectiveCall call : step.calls()) {
      String axis = schedule.axisOf(call);
      StringBuilder c = new StringBuilder(call.collective().label()).append(axis.isEmpty() ? "" : " over " + axis)
          .append(' ').append(call.dataType());
      if (call.op() != null) {
        c.append(' ').append(call.op());
      }
      if (call.collective().hasRoot()) {
        c.append(" root ").append(call.root());
      }
      if (call.collective().pointToPoint()) {
        c.append(call.collective() == Collective.SEND ? " to " : " from ")
            .append(call.peer() < 0 ? "no one" : "rank " + call.peer());
      }
      calls.add(c.append(", count ").append(call.count()).toString());
      fields.addAll(call.fields());
    }
    return new OperationLabel(planName, step.number(), step.bucket(), String.join(" + ", calls), fields);
  }
}
