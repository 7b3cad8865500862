package dev.commplan.runtime.nccl.binding.raw;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * The only place that calls restricted FFM methods (opening a library, making a downcall handle, giving
 * a C string returned by a native function a length). Everything else in the NCCL backend goes through
 * here, so that {@code @SuppressWarnings("restricted")} is written once, as in Lucene's {@code
 * PosixNativeAccess}. The backend checks {@link Module#isNativeAccessEnabled()} before it gets here. It
 * also says, once for every binding of this package, what a downcall's {@code invokeExact} may throw.
 */
@SuppressWarnings("restricted")
public final class NativeAccess {
  private static final Linker LINKER = Linker.nativeLinker();

  private NativeAccess() {}

  /** Opens a library by file path; the library stays loaded for the life of the JVM. */
  static SymbolLookup openPath(Path path) {
    return SymbolLookup.libraryLookup(path, Arena.global());
  }

  /** Opens a library by name through the dynamic loader ({@code dlopen} search order). */
  static SymbolLookup openName(String name) {
    return SymbolLookup.libraryLookup(name, Arena.global());
  }

  /** A downcall handle for {@code symbol}. */
  static MethodHandle downcall(
      MemorySegment symbol, FunctionDescriptor descriptor, Linker.Option... options) {
    return LINKER.downcallHandle(symbol, descriptor, options);
  }

  /**
   * A downcall handle for {@code name} in the C library the JVM itself links with ({@link
   * Linker#defaultLookup()}: libc's {@code getenv}, {@code setenv}), or null where there is none.
   */
  static MethodHandle downcallToC(String name, FunctionDescriptor descriptor) {
    return LINKER.defaultLookup().find(name).map(symbol -> LINKER.downcallHandle(symbol, descriptor)).orElse(null);
  }

  /**
   * What a binding's {@code invokeExact} threw, for {@code throw unreachable(t)}: a RuntimeException or
   * Error is rethrown as is; a checked exception (which a native downcall cannot throw) becomes an
   * AssertionError.
   */
  static Error unreachable(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new AssertionError("a native downcall threw a checked exception", t);
  }

  /**
   * Reads the NUL-terminated string at {@code address} (a {@code const char*} returned by the library,
   * such as {@code ncclGetErrorString}'s), or null for NULL.
   */
  public static String cString(MemorySegment address) {
    if (address == null || address.address() == 0) {
      return null;
    }
    return address.reinterpret(Long.MAX_VALUE).getString(0);
  }
}
