package dev.commplan.runtime.plan;

/**
 * The arguments the check-cost tools share ({@link AgreementCheckCost}, {@link OrderCheckCost}): {@code
 * local|nccl RANKS [units] [count]}, or {@code mpi [units] [count]} under mpirun (the ranks are its
 * processes).
 *
 * @param backend the backend's name
 * @param ranks the ranks of a local or NCCL cluster (0 for MPI)
 * @param units the timed units
 * @param count the elements of the all-reduce
 */
record CostArgs(String backend, int ranks, int units, long count) {
  static CostArgs parse(String[] args, int defaultUnits, long defaultCount) {
    String backend = args[0];
    boolean mpi = backend.equals("mpi");
    int next = mpi ? 1 : 2;
    return new CostArgs(backend, mpi ? 0 : Integer.parseInt(args[1]),
        args.length > next ? Integer.parseInt(args[next]) : defaultUnits,
        args.length > next + 1 ? Long.parseLong(args[next + 1]) : defaultCount);
  }

  boolean mpi() {
    return backend.equals("mpi");
  }
}
