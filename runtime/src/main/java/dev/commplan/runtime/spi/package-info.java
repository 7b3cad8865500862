/**
 * The contract between the runtime and its backends (local, NCCL, MPI, or a third party's). A backend's
 * communicator implements {@link dev.commplan.runtime.spi.BackendCommunicator} ({@link
 * dev.commplan.runtime.Communicator}, {@link dev.commplan.runtime.DeviceMemory.Allocator} and {@link
 * dev.commplan.runtime.plan.CompiledSchedule.Compiler}), usually by extending {@link
 * dev.commplan.runtime.spi.AbstractCommunicator}, with streams built on {@link
 * dev.commplan.runtime.spi.StreamBase}; user code rarely needs this package.
 */
package dev.commplan.runtime.spi;

import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.DeviceMemory;
