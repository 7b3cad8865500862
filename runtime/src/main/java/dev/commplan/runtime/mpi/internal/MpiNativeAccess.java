package dev.commplan.runtime.mpi.internal;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * The only place in the MPI backend that calls restricted FFM methods (opening the library, making
 * downcall and upcall handles, giving a native pointer a length), so that {@code
 * @SuppressWarnings("restricted")} is written once. The backend checks {@link
 * Module#isNativeAccessEnabled()} before it gets here.
 *
 * <p>Internal: not part of CommPlan's API.
 */
@SuppressWarnings("restricted")
public final class MpiNativeAccess {
  private static final Linker LINKER = Linker.nativeLinker();

  private MpiNativeAccess() {}

  static SymbolLookup openPath(Path path) {
    return SymbolLookup.libraryLookup(path, Arena.global());
  }

  static SymbolLookup openName(String name) {
    return SymbolLookup.libraryLookup(name, Arena.global());
  }

  static MethodHandle downcall(MemorySegment symbol, FunctionDescriptor descriptor, Linker.Option... options) {
    return LINKER.downcallHandle(symbol, descriptor, options);
  }

  /** An upcall stub for {@code target}, alive for the life of the JVM (MPI keeps user ops until MPI_Op_free). */
  static MemorySegment upcall(MethodHandle target, FunctionDescriptor descriptor) {
    return LINKER.upcallStub(target, descriptor, Arena.global());
  }

  /** {@code address} as a segment of {@code bytes} (a pointer MPI hands to a user op). */
  static MemorySegment sized(long address, long bytes) {
    return MemorySegment.ofAddress(address).reinterpret(bytes);
  }
}
