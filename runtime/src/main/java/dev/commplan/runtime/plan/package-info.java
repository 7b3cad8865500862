/**
 * Plans: what generated plan classes call ({@link dev.commplan.runtime.plan.PlanBuilder}, which builds a
 * {@link dev.commplan.runtime.plan.Plan}) and what a backend compiles ({@link
 * dev.commplan.runtime.plan.Schedule}, its {@link dev.commplan.runtime.plan.Step}s and {@link
 * dev.commplan.runtime.plan.CollectiveCall}s, into a {@link dev.commplan.runtime.plan.CompiledSchedule}).
 * A plan's build stages (its rules, layout, schedule builder, guard tables, description) are package-private
 * here; the rules they share with direct calls are in the runtime's non-exported {@code rules} package.
 */
package dev.commplan.runtime.plan;
