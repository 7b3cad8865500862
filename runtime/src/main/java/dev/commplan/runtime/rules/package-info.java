/**
 * The runtime's rules on a collective's arguments, each once, with the ids the processor prints: used by
 * a plan's build and, through {@code spi.AbstractCommunicator}, by every backend's direct calls and
 * compiled schedules ({@link CallRules}); and the two-stream rule, which orders CommPlan's work on a
 * buffer after its earlier work on another stream ({@link StreamOrder}). Not exported: backends get the
 * checks by extending the SPI, not by calling them.
 */
package dev.commplan.runtime.rules;
