/**
 * Plans: what generated plan classes call ({@link PlanBuilder}, which builds a {@link Plan}) and what a
 * backend compiles ({@link Schedule}, its {@link Step}s and {@link CollectiveCall}s, into a {@link
 * CompiledSchedule}). A plan's build stages (its rules, layout, schedule builder, guard tables,
 * description) are package-private here; the rules they share with direct calls are in the runtime's
 * non-exported {@code rules} package.
 */
package dev.commplan.runtime.plan;
