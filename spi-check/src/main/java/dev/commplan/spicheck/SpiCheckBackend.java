package dev.commplan.spicheck;

import dev.commplan.runtime.Backend;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.launch.ProcessInfo;

/**
 * The {@code "spi-check"} backend: ranks as threads of this JVM ({@link SpiCheckCluster}), found through
 * {@code provides dev.commplan.runtime.Backend} in this module's descriptor.
 */
public final class SpiCheckBackend implements Backend {
  /** The name users pick it by. */
  public static final String NAME = "spi-check";

  /** For {@link java.util.ServiceLoader}; use {@code Backends.cluster("spi-check", n)}. */
  public SpiCheckBackend() {}

  @Override
  public String name() {
    return NAME;
  }

  /** Always null: it needs nothing but this JVM. */
  @Override
  public String unavailableReason() {
    return null;
  }

  @Override
  public Cluster cluster(int ranks, CommOptions options) {
    return new SpiCheckCluster(ranks, options);
  }

  /** Refused: its ranks are threads of one process. */
  @Override
  public Communicator processCommunicator(ProcessInfo info, CommOptions options) {
    throw new IllegalArgumentException("the spi-check backend's ranks are threads of one process: use"
        + " Backends.cluster(\"spi-check\", n)");
  }
}
