/**
 * CommPlan's runtime: buffers, streams, communicators and plans, and the local, NCCL and MPI backends
 * (docs/architecture.md draws the layers).
 *
 * <p>Exported: the API ({@code dev.commplan.runtime}, with {@code launch}: where this process sits in a
 * job), {@code plan} (what generated plans call), {@code spi} (for backend authors), and each backend's
 * own public entry points and exceptions ({@code local}, {@code nccl}, {@code mpi}, and {@code
 * bootstrap}, the rendezvous the NCCL backend's one-rank-per-process start uses). Not exported: the
 * host-access guard's bookkeeping and the raw native bindings ({@code nccl.internal}, {@code
 * mpi.internal}). Backends are found through {@link dev.commplan.runtime.Backend} services, here and in
 * other modules' jars.
 *
 * <p>On the module path, FFM needs {@code --enable-native-access=dev.commplan.runtime}.
 */
module dev.commplan.runtime {
  requires transitive dev.commplan.annotations;
  requires transitive dev.commplan.model;

  exports dev.commplan.runtime;
  exports dev.commplan.runtime.launch;
  exports dev.commplan.runtime.plan;
  exports dev.commplan.runtime.spi;
  exports dev.commplan.runtime.bootstrap;
  exports dev.commplan.runtime.local;
  exports dev.commplan.runtime.nccl;
  exports dev.commplan.runtime.mpi;

  uses dev.commplan.runtime.Backend;

  provides dev.commplan.runtime.Backend with
      dev.commplan.runtime.local.LocalBackendProvider,
      dev.commplan.runtime.nccl.NcclBackendProvider,
      dev.commplan.runtime.mpi.MpiBackendProvider;
}
