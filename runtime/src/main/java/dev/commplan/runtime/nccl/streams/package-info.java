/**
 * A communicator's CUDA streams ({@link NcclStream}: its own, those {@code newStream()} made, and wrapped
 * ones of other code) and their events ({@link NcclEvent}, from a pool of CUDA events per communicator,
 * {@link NcclEvents}). A stream asks its rank before every CUDA call and waits for its work within the
 * rank's timeout; {@link NcclStream#handleOf} is the one check that a {@code Stream} is a live stream of a
 * rank.
 */
package dev.commplan.runtime.nccl.streams;
