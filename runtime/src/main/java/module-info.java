/**
 * CommPlan's runtime: buffers, streams, communicators and plans, and the local, NCCL and MPI backends
 * (docs/architecture.md draws the layers).
 *
 * <p>Exported: the API ({@code dev.commplan.runtime}, with {@code launch}: where this process sits in a
 * job); {@code plan}: what generated plans call ({@code PlanBuilder}, {@code Plan}) and what a backend
 * compiles ({@code Schedule}, {@code Step}, {@code CollectiveCall}, {@code CompiledSchedule}); {@code spi}:
 * what a backend is built from ({@code AbstractCommunicator}, {@code StreamBase}, {@code RankSupervisor}
 * and their helpers), enough for a backend in a module of its own; and each backend's own public entry
 * points and exceptions ({@code local}, {@code nccl}, {@code mpi}, and {@code bootstrap}, the rendezvous
 * the NCCL backend's one-rank-per-process start uses). Not exported: the host-access guard's bookkeeping
 * ({@code guard}), the rules every call and schedule is checked by ({@code rules}), the cross-rank
 * agreement check ({@code agreement}), a plan's build stages (package-private in {@code plan}), the NCCL
 * backend's layers under its entry points ({@code nccl.binding} and its raw bindings, {@code calls},
 * {@code graphs}, {@code memory}, {@code rank}, {@code sharing}, {@code streams}) and MPI's raw bindings
 * ({@code mpi.internal}). No exported signature names a type of a package that is not exported: the
 * module compiles with {@code -Xlint:all -Werror}.
 *
 * <p>Backends are found through {@link dev.commplan.runtime.Backend} services: the three below, and
 * other modules' ({@code provides dev.commplan.runtime.Backend with ...}) or jars' on the class path
 * ({@code META-INF/services}).
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
