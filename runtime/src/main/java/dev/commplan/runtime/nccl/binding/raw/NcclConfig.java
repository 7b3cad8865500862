package dev.commplan.runtime.nccl.binding.raw;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * {@code ncclConfig_t} as NCCL 2.17 lays it out ({@code struct ncclConfig_v21700} in {@code src/nccl.h.in}
 * of the v2.17.1-1 tag), the argument of {@code ncclCommInitRankConfig} and {@code ncclCommSplit}:
 *
 * <pre>{@code
 * size_t size;            //  0: sizeof the struct the caller was compiled with: 40
 * unsigned int magic;     //  8: NCCL_API_MAGIC, 0xcafebeef
 * unsigned int version;   // 12: NCCL_VERSION of the caller's header: 21700
 * int blocking;           // 16
 * int cgaClusterSize;     // 20
 * int minCTAs;            // 24
 * int maxCTAs;            // 28
 * const char *netName;    // 32
 * }</pre>
 *
 * <p>Every newer NCCL reads it: {@code parseCommConfig} ({@code src/init.cc}) copies {@code min(size,
 * sizeof(its own struct))} bytes over {@code NCCL_CONFIG_INITIALIZER}, so the fields after {@code netName}
 * keep their "undefined" initial values, and it honours the fields a caller of {@code version} could set
 * (from 2.17.0: {@code cgaClusterSize}, {@code minCTAs}, {@code maxCTAs}, {@code netName}). Every int left
 * unset is {@link #UNDEF_INT} ({@code NCCL_CONFIG_UNDEF_INT}, NCCL's default then), {@code netName} NULL.
 * Environment variables still override it ({@code NCCL_MAX_CTAS} over {@code maxCTAs}: {@code
 * envConfigOverride}).
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class NcclConfig {
  private NcclConfig() {}

  /** {@code NCCL_API_MAGIC}. */
  public static final int MAGIC = 0xcafebeef;
  /** The {@code version} field: {@code NCCL_VERSION(2, 17, 0)}, the layout written here. */
  public static final int VERSION = 21700;
  /** {@code NCCL_CONFIG_UNDEF_INT} ({@code INT_MIN}): NCCL picks its default. */
  public static final int UNDEF_INT = Integer.MIN_VALUE;

  /** The struct, field by field (the comment above gives the offsets). */
  public static final StructLayout LAYOUT = MemoryLayout.structLayout(
      JAVA_LONG.withName("size"), JAVA_INT.withName("magic"), JAVA_INT.withName("version"),
      JAVA_INT.withName("blocking"), JAVA_INT.withName("cgaClusterSize"), JAVA_INT.withName("minCTAs"),
      JAVA_INT.withName("maxCTAs"), ADDRESS.withName("netName")).withName("ncclConfig_v21700");

  private static final VarHandle SIZE = field("size");
  private static final VarHandle MAGIC_FIELD = field("magic");
  private static final VarHandle VERSION_FIELD = field("version");
  private static final VarHandle BLOCKING = field("blocking");
  private static final VarHandle CGA_CLUSTER_SIZE = field("cgaClusterSize");
  private static final VarHandle MIN_CTAS = field("minCTAs");
  private static final VarHandle MAX_CTAS = field("maxCTAs");
  private static final VarHandle NET_NAME = field("netName");

  private static VarHandle field(String name) {
    return LAYOUT.varHandle(MemoryLayout.PathElement.groupElement(name));
  }

  /**
   * A config in {@code arena} as {@code NCCL_CONFIG_INITIALIZER} makes it, with {@code maxCTAs} set: at most
   * that many CTAs (channels) a collective of the communicator launches.
   *
   * @param maxCtas a positive limit, or {@link #UNDEF_INT} for NCCL's default
   */
  public static MemorySegment withMaxCtas(Arena arena, int maxCtas) {
    if (maxCtas <= 0 && maxCtas != UNDEF_INT) {
      throw new IllegalArgumentException("maxCTAs must be positive (or NCCL_CONFIG_UNDEF_INT), not " + maxCtas);
    }
    MemorySegment config = arena.allocate(LAYOUT);
    SIZE.set(config, 0L, LAYOUT.byteSize());
    MAGIC_FIELD.set(config, 0L, MAGIC);
    VERSION_FIELD.set(config, 0L, VERSION);
    BLOCKING.set(config, 0L, UNDEF_INT);
    CGA_CLUSTER_SIZE.set(config, 0L, UNDEF_INT);
    MIN_CTAS.set(config, 0L, UNDEF_INT);
    MAX_CTAS.set(config, 0L, maxCtas);
    NET_NAME.set(config, 0L, MemorySegment.NULL);
    return config;
  }
}
