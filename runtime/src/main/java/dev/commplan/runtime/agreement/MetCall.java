package dev.commplan.runtime.agreement;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One rank's side of a call where the ranks meet, as a backend hands it to this package to decide whether the
 * ranks' calls there agree ({@link HostComparison}): the collective with its arguments, and what made it (a
 * plan's step, a direct call, or the agreement check itself).
 *
 * @param collective the collective; a send or receive included
 * @param type its data type
 * @param op its op, or null
 * @param rootOrPeer its root, a send's or receive's peer, or -1
 * @param count its count
 * @param planName the plan whose step made it, or null for a direct call or one of the check's
 * @param step the plan's step, or -1
 * @param bucket the plan's bucket, or -1
 * @param fields the plan's fields it covers; empty outside a plan
 * @param check whether it is one of the agreement check's own calls
 */
public record MetCall(Collective collective, DataType type, ReduceOp op, int rootOrPeer, long count, String planName,
    int step, int bucket, List<String> fields, boolean check) {
  /**
   * Checks and copies.
   *
   * @param collective the collective; a send or receive included
   * @param type its data type
   * @param op its op, or null
   * @param rootOrPeer its root, a send's or receive's peer, or -1
   * @param count its count
   * @param planName the plan whose step made it, or null for a direct call or one of the check's
   * @param step the plan's step, or -1
   * @param bucket the plan's bucket, or -1
   * @param fields the plan's fields it covers; empty outside a plan
   * @param check whether it is one of the agreement check's own calls
   */
  public MetCall {
    Objects.requireNonNull(collective, "collective");
    Objects.requireNonNull(type, "type");
    fields = List.copyOf(fields);
  }

  /**
   * What the call is, for messages, worded as the check's records are ({@link CallRecord#text}) where it is a
   * direct call: {@code direct call: all-reduce F32 SUM, count 8}, {@code send F32 to rank 1, count 4}, {@code
   * agreement check: all-gather U64, count 4}, {@code plan p.Grads, step 0, bucket 1: all-reduce F32 SUM of [w,
   * b], count 16}.
   */
  String text() {
    int kind = collective == Collective.SEND ? CallRecord.SEND : collective == Collective.RECV ? CallRecord.RECV
        : CallRecord.DIRECT;
    long[] record = {CallRecord.direct(kind, collective, type, op, rootOrPeer), count, 0, 0};
    String call = CallRecord.text(record, 0, null);
    if (planName == null) {
      return check ? "agreement check: " + call.substring(call.indexOf(':') + 2) : call;
    }
    String bare = kind == CallRecord.DIRECT ? call.substring(call.indexOf(':') + 2) : call;
    int comma = bare.lastIndexOf(", count ");
    return "plan " + planName + ", step " + step + (bucket >= 0 ? ", bucket " + bucket : "") + ": "
        + bare.substring(0, comma) + (fields.isEmpty() ? "" : " of " + fields) + bare.substring(comma);
  }

  /**
   * {@return whether this call and {@code other}, met at the same place, agree} Allocates nothing: asked at every
   * meeting of the ranks.
   *
   * @param other another rank's call there
   */
  public boolean agreesWith(MetCall other) {
    return check == other.check && Objects.equals(planName, other.planName) && step == other.step
        && (bucket < 0 || other.bucket < 0 || bucket == other.bucket) && collective == other.collective
        && type == other.type && op == other.op && rootOrPeer == other.rootOrPeer && count == other.count;
  }

  /**
   * {@return whether this send and the receive it met ({@code receive}) pair: the same data type and count}
   * Allocates nothing.
   *
   * @param receive the receive
   */
  public boolean pairsWith(MetCall receive) {
    return type == receive.type && count == receive.count;
  }

  /** The names of what differs between this call and {@code other} met at the same place: none where they agree. */
  List<String> differences(MetCall other) {
    List<String> out = new ArrayList<>();
    if (check != other.check || !Objects.equals(planName, other.planName)) {
      out.add("call (another call at this place)");
    } else {
      if (step != other.step) {
        out.add("step");
      }
      if (bucket >= 0 && other.bucket >= 0 && bucket != other.bucket) { // a bucket against a whole execute or step
        out.add("bucket");                                               // may issue the same call: the check tells
      }
    }
    if (collective != other.collective) {
      out.add("collective");
    }
    if (type != other.type) {
      out.add("data type");
    }
    if (op != other.op) {
      out.add("op");
    }
    if (rootOrPeer != other.rootOrPeer) {
      out.add(collective.pointToPoint() ? "peer" : "root");
    }
    if (count != other.count) {
      out.add("count");
    }
    return out;
  }

  /** What differs between this send and the receive it met ({@code receive}): the data type, the count. */
  List<String> messageDifferences(MetCall receive) {
    List<String> out = new ArrayList<>();
    if (type != receive.type) {
      out.add("data type");
    }
    if (count != receive.count) {
      out.add("count");
    }
    return out;
  }
}
