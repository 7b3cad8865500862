package dev.commplan.conformance;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.DataType;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;

/**
 * What every suite of the kit knows about the backend under test, and the clusters it runs on. A backend
 * runs a suite by subclassing it and naming itself ({@link #backend()}); the other hooks have defaults that
 * suit a backend whose ranks are threads or devices of one process and that runs every data type, and a
 * backend overrides those that do not hold for it (the world sizes it has devices for, the types it lacks,
 * the precision its reductions accumulate in).
 *
 * <p>One instance per test class ({@link TestInstance.Lifecycle#PER_CLASS}): one cluster per world size is
 * made on first use, shared by the class's tests, and closed after all of them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class BackendSuite {
  /** The default world sizes: odd ones among them, so that slices of the work do not divide evenly. */
  private static final int[] DEFAULT_WORLD_SIZES = {1, 2, 3, 4, 5, 8};

  private final Map<Integer, Cluster> clusters = new HashMap<>();

  /** For subclasses. */
  protected BackendSuite() {}

  /**
   * {@return the name of the backend under test, as {@code Backends.cluster(name, n)} finds it} (a backend
   * in a module of its own is found through its {@code provides}).
   */
  protected abstract String backend();

  /**
   * {@return the world sizes the suite runs at} The default: 1, 2, 3, 4, 5 and 8 (odd ones among them, so
   * that slices of the work do not divide evenly); a GPU backend returns the sizes it has devices for.
   */
  protected int[] worldSizes() {
    return DEFAULT_WORLD_SIZES.clone();
  }

  /** {@return the options of the clusters the suite makes} The default: {@link CommOptions#defaults()}. */
  protected CommOptions options() {
    return CommOptions.defaults();
  }

  /**
   * A fresh cluster of {@code ranks} ranks on the backend under test. The default: {@code
   * Backends.cluster(backend(), ranks, options())}.
   *
   * @param ranks the number of ranks
   * @return the cluster, which the suite closes
   */
  protected Cluster cluster(int ranks) {
    return Backends.cluster(backend(), ranks, options());
  }

  /**
   * Whether the backend under test runs {@code type} here (the NCCL backend needs NCCL 2.24 for the fp8
   * types); the suites leave out the types it does not. The default: every type.
   *
   * @param type a data type
   * @return true if the suites test it
   */
  protected boolean supports(DataType type) {
    return true;
  }

  /**
   * The unit roundoff of the precision the backend accumulates floating-point reductions in, which sets the
   * tolerance of their results ({@link CollectiveReference#tolerance}). The default is the local backend's:
   * float for the 8- and 16-bit types and F32, double for F64 ({@link CollectiveReference#floatAccumulation}).
   * A backend whose partial results travel between ranks in the buffer's own type (NCCL, MPI) returns {@link
   * CollectiveReference#typeAccumulation} instead.
   *
   * @param type a floating-point type
   * @return the unit roundoff
   */
  protected double accumulationRoundoff(DataType type) {
    return CollectiveReference.floatAccumulation(type);
  }

  /**
   * The cluster of {@code ranks} ranks this suite's tests share: made by {@link #cluster(int)} on first use,
   * closed after the class's last test.
   *
   * @param ranks the number of ranks
   * @return the shared cluster
   */
  protected final Cluster clusterOf(int ranks) {
    return clusters.computeIfAbsent(ranks, this::cluster);
  }

  /** {@return the smallest of {@link #worldSizes()}} */
  protected final int smallestWorld() {
    return Arrays.stream(worldSizes()).min().orElseThrow();
  }

  /** {@return the largest of {@link #worldSizes()}} */
  protected final int largestWorld() {
    return Arrays.stream(worldSizes()).max().orElseThrow();
  }

  @AfterAll
  final void closeClusters() {
    try {
      clusters.values().forEach(Cluster::close);
    } finally {
      clusters.clear();
    }
  }
}
