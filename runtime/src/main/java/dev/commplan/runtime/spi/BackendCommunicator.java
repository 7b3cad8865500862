package dev.commplan.runtime.spi;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.plan.CompiledSchedule;

/**
 * The backend-facing half of a communicator, in one name: what users call ({@link Communicator}), plus
 * what buffers and plans need from the backend (device memory, {@link DeviceMemory.Allocator}; compiled
 * schedules, {@link CompiledSchedule.Compiler}). Every backend's communicator implements it, with a
 * stream built on {@link StreamBase}.
 */
public interface BackendCommunicator extends Communicator, DeviceMemory.Allocator, CompiledSchedule.Compiler {}
