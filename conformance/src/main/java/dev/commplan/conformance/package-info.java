/**
 * The conformance kit: what every CommPlan backend must do, as JUnit 5 suites written once against the
 * runtime's public API and run by naming a backend, as JDBC drivers and JCache providers run their TCKs.
 *
 * <p>In-process clusters (ranks as threads or devices of one JVM): subclass each suite and name the backend,
 * {@code protected String backend() { return "my-backend"; }}; {@link dev.commplan.conformance.BackendSuite}'s
 * other hooks say what differs (world sizes, data types, the precision of reductions).
 *
 * <ul>
 *   <li>{@link dev.commplan.conformance.CollectiveCorrectnessSuite}: every collective × type × op or root × in
 *       and out of place × world size × count, against an exact reference; plans through the backend's compiled
 *       schedules;
 *   <li>{@link dev.commplan.conformance.PointToPointSuite}: sends and receives, in plans and direct, in a group
 *       and without;
 *   <li>{@link dev.commplan.conformance.CapturedPlanSuite}: captured plans launched again and again, and their
 *       misuse;
 *   <li>{@link dev.commplan.conformance.SplitSuite}: splits and meshes, their streams, labels, memory, family
 *       and failures;
 *   <li>{@link dev.commplan.conformance.MeshSuite}: every collective and transfer over each axis of each mesh,
 *       and a plan over the axes.
 * </ul>
 *
 * <p>Ranks as processes: {@link dev.commplan.conformance.ProcessConformance#runOnRank} on every process.
 * {@link dev.commplan.conformance.CollectiveReference} and {@link dev.commplan.conformance.TypedBits} are the
 * reference and the bit-level buffer access the suites use, for a backend's own tests too.
 */
package dev.commplan.conformance;
