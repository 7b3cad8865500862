package dev.commplan.bench;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DeviceMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One rank's host staging memory: inputs are written here, then copied to the device; results are
 * copied back here to be checked. Confined to the rank's thread, freed on close.
 */
final class HostStage implements AutoCloseable {
  private final Arena arena = Arena.ofConfined();
  final MemorySegment host;

  HostStage(long bytes) {
    host = arena.allocate(Math.max(bytes, 8), 64);
  }

  /** Copies the first {@code buffer.byteSize()} bytes of the stage into {@code buffer}. */
  void upload(Buffer buffer) {
    upload(buffer.memory(), buffer.byteOffset(), buffer.byteSize());
  }

  void upload(DeviceMemory memory, long byteOffset, long bytes) {
    memory.copyFromHost(host, 0, byteOffset, bytes);
  }

  /** Copies {@code buffer} into the start of the stage. */
  void download(Buffer buffer) {
    download(buffer.memory(), buffer.byteOffset(), buffer.byteSize());
  }

  void download(DeviceMemory memory, long byteOffset, long bytes) {
    memory.copyToHost(byteOffset, host, 0, bytes);
  }

  /** Zeroes {@code buffer} on the device. */
  void zero(Buffer buffer) {
    host.asSlice(0, buffer.byteSize()).fill((byte) 0);
    upload(buffer);
  }

  @Override
  public void close() {
    arena.close();
  }
}
