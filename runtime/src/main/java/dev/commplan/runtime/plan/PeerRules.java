package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.model.Peer;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.rules.CallRules;
import java.util.List;

/**
 * The rules of a plan's sends and receives, with the processor's ids: a peer as written parses (rule 17)
 * and every transfer of a step has its partner over the same group (rules 18 and 22). The direct calls'
 * peer rule is {@link CallRules#checkPointToPoint(Collective, Communicator, Buffer, int, Stream)}.
 */
final class PeerRules {
  private PeerRules() {}

  /**
   * Rule 18, {@link RuleId#UNMATCHED_PEER}: in each step, every send is matched one to one by a receive of
   * the same data type and count whose peer is its inverse ({@link PointToPointPairs}), so that no rank
   * waits forever for a transfer that never comes, or receives a different size. The processor proves
   * this at compile time; this re-checks hand-written builders with the same id.
   */
  static void checkPairs(String planName, Declarations declarations, List<Declarations.Call> ordered) {
    PointToPointPairs pairs = PointToPointPairs.of(declarations, ordered);
    for (Declarations.Call alone : pairs.unmatched()) {
      Declarations.Field field = declarations.field(alone.send());
      Collective needed = alone.collective().counterpart();
      String wanted = "@" + needed.annotation() + "(" + needed.peerAttribute() + " = \"" + alone.peer().inverse()
          + "\"" + (alone.step() != 0 ? ", step = " + alone.step() : "")
          + (alone.group() != 0 ? ", over = \"" + declarations.axis(alone.group()) + "\"" : "") + ")";
      throw new PlanBuildException(RuleId.UNMATCHED_PEER.tag() + " plan " + planName + ": "
          + declarations.annotation(alone) + " on field '" + field.field() + "' (" + field.type() + ", count "
          + field.count() + ", shape " + field.shape() + ") has no matching " + wanted + " of " + field.type()
          + " and count " + field.count() + " in step " + alone.step() + "; every " + (alone.collective()
              == Collective.SEND ? "send needs a receive" : "receive needs a send") + " there, one to one, or the"
          + " plan could deadlock or truncate. Fix: declare " + wanted + " on a field of type " + field.type() + " with"
          + " @Shape(" + field.shape() + "), or remove this " + alone.collective().label());
    }
  }

  /**
   * Rule 17, {@link RuleId#BAD_PEER}: a {@code to}/{@code from} as written in {@code @Send}/{@code @Recv}
   * must parse as a peer ({@link Peer#parse}).
   */
  static Peer parsePeer(String planName, Collective collective, String field, int step, String text) {
    try {
      return Peer.parse(text);
    } catch (IllegalArgumentException e) {
      throw new PlanBuildException(RuleId.BAD_PEER.tag() + " plan " + planName + ": @" + collective.annotation() + "("
          + collective.peerAttribute() + " = \"" + text + "\"" + (step != 0 ? ", step = " + step : "") + ") on field '"
          + field + "': " + e.getMessage() + ". Fix: write the peer as one of those, e.g. \"rank + 1\""
          + " or \"(rank - 1) % ranks\"");
    }
  }

}
