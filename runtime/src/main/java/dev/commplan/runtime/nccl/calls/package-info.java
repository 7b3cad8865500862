/**
 * How a collective reaches NCCL. A direct call ({@code comm.allReduce(...)}) and a user's group go through
 * {@link NcclDirectCalls}; a plan's steps through {@link NcclScheduleCalls}, resolved once when the plan is
 * compiled and issued one NCCL group per step. Both hand each call to {@code binding.NcclDispatch}, record
 * it in the rank's flight record, and let the rank's state turn a failing code into an exception. Gather,
 * Scatter and AllToAll on an NCCL without them are their sends and receives ({@link SendRecvStandIns}).
 */
package dev.commplan.runtime.nccl.calls;
