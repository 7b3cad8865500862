/**
 * The conformance kit: the suites every CommPlan backend passes, written once as JUnit 5 tests against the
 * runtime's public API. A backend runs them by naming itself (a subclass of each suite whose {@code
 * backend()} returns its name, as {@code Backends.cluster(name, n)} finds it); a backend whose ranks are
 * processes runs their per-rank form on each process ({@link dev.commplan.conformance.ProcessConformance}).
 * The package's {@code package-info} lists the suites.
 */
module dev.commplan.conformance {
  // transitive: the suites' hooks name runtime types (Cluster, DataType, Communicator) and JUnit's (the tests)
  requires transitive dev.commplan.runtime;
  requires transitive org.junit.jupiter.api;

  exports dev.commplan.conformance;
  // JUnit calls the suites' test methods, which are package-private, reflectively
  opens dev.commplan.conformance to org.junit.platform.commons;
}
