package dev.commplan.runtime;

/**
 * How long a communicator's ranks waited for one of them, estimated while the job runs ({@link
 * Communicator#lateness()}): the online form of the doctor's lateness (docs/doctor.md, "Lateness"), by the same
 * rule, over the windows of the agreement check rather than over single collectives (docs/reliability.md,
 * "Lateness online").
 *
 * <p>Each window is the calls between two of the agreement check's comparisons; in each, every rank's mean wait
 * per collective is compared with the others' ({@code late = max(0, min over the other ranks of (their mean wait
 * - this rank's))}): how long, per collective, the group waited for this rank alone. A rank that comes late to
 * every collective by 50 ms shows about 50 ms here; ranks that are never last show 0.
 *
 * @param rank the rank, in the communicator
 * @param windows how many of the agreement check's windows the figures cover (those in which every rank timed
 *     at least one collective)
 * @param medianNanos the median, over those windows, of how long the group waited for this rank alone per
 *     collective, in nanoseconds
 * @param worstNanos the largest such figure of a window, in nanoseconds
 */
public record Lateness(int rank, int windows, long medianNanos, long worstNanos) {}
