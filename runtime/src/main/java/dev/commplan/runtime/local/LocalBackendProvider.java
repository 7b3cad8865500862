package dev.commplan.runtime.local;

import dev.commplan.runtime.Backend;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.launch.ProcessInfo;
import java.util.ServiceLoader;

/** The local backend as {@link Backend} {@code "local"}: ranks as threads of this JVM ({@link LocalCluster}). */
public final class LocalBackendProvider implements Backend {
  /** For {@link ServiceLoader}; use {@code Backends} to get one. */
  public LocalBackendProvider() {}

  @Override
  public String name() {
    return "local";
  }

  /** Always null: the local backend needs nothing but this JVM. */
  @Override
  public String unavailableReason() {
    return null;
  }

  @Override
  public Cluster cluster(int ranks, CommOptions options) {
    return new LocalCluster(ranks, options);
  }

  /** Refused: the local backend's ranks are threads of one process. */
  @Override
  public Communicator processCommunicator(ProcessInfo info, CommOptions options) {
    throw new IllegalArgumentException(
        "the local backend's ranks are threads of one process, not one rank per process: use"
            + " Backends.cluster(\"local\", n)");
  }
}
