/**
 * The contract between the runtime and its backends (local, NCCL). Backends implement {@link
 * dev.commplan.runtime.Communicator}, {@link dev.commplan.runtime.spi.DeviceMemory} and {@link
 * dev.commplan.runtime.spi.CompiledSchedule}; user code rarely needs this package.
 */
package dev.commplan.runtime.spi;

import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.DeviceMemory;
