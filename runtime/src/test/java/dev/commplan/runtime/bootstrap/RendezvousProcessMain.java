package dev.commplan.runtime.bootstrap;

import dev.commplan.runtime.launch.LaunchEnvironment;
import dev.commplan.runtime.launch.ProcessInfo;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.stream.Collectors;

/**
 * One process of the multi-process rendezvous tests: reads its place from the launcher variables, joins,
 * receives rank 0's 128-byte id, all-gathers a rank-specific random array, and prints {@code ID <hex>}
 * and {@code ALL <hex>,<hex>,...}; on failure prints {@code FAIL <message>} and exits 2. Test knobs:
 * {@code TEST_SEED}, {@code TEST_JOIN_MS}, {@code TEST_OP_MS}, {@code TEST_DIE_RANK} (that rank halts
 * right after joining, as if killed).
 */
public final class RendezvousProcessMain {
  private RendezvousProcessMain() {}

  static byte[] id(long seed) {
    byte[] id = new byte[128];
    new Random(seed).nextBytes(id);
    return id;
  }

  static byte[] contribution(long seed, int rank) {
    Random r = new Random(seed * 1000 + rank);
    byte[] b = new byte[1 + r.nextInt(200)];
    r.nextBytes(b);
    return b;
  }

  public static void main(String[] args) {
    long seed = Long.parseLong(System.getenv().getOrDefault("TEST_SEED", "1"));
    int dieRank = Integer.parseInt(System.getenv().getOrDefault("TEST_DIE_RANK", "-1"));
    Rendezvous.Options options = Rendezvous.Options.defaults()
        .withJoinTimeout(Duration.ofMillis(Long.parseLong(System.getenv().getOrDefault("TEST_JOIN_MS", "20000"))))
        .withOpTimeout(Duration.ofMillis(Long.parseLong(System.getenv().getOrDefault("TEST_OP_MS", "20000"))));
    HexFormat hex = HexFormat.of();
    try {
      ProcessInfo me = LaunchEnvironment.fromEnvironment();
      try (Rendezvous rv = Rendezvous.join(me, options)) {
        System.out.println("JOINED " + me);
        System.out.flush();
        if (me.rank() == dieRank) {
          Runtime.getRuntime().halt(3); // killed mid-exchange: no close, no goodbye
        }
        byte[] got = rv.broadcast(me.rank() == 0 ? id(seed) : null);
        List<byte[]> all = rv.allGather(contribution(seed, me.rank()));
        System.out.println("ID " + hex.formatHex(got));
        System.out.println("ALL " + all.stream().map(hex::formatHex).collect(Collectors.joining(",")));
      }
      System.exit(0);
    } catch (RuntimeException e) {
      System.out.println("FAIL " + e.getMessage());
      System.exit(2);
    }
  }
}
