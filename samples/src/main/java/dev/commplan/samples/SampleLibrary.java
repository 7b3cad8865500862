package dev.commplan.samples;

import dev.commplan.runtime.spi.NativeLibraryLookup;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * A native library a sample calls through FFM itself (cuBLAS, the CUDA runtime's timing events), found as
 * the runtime finds its own ({@link NativeLibraryLookup}: a system property's path or name, else the
 * soname). The only class of the samples that calls restricted FFM methods, so that {@code
 * SuppressWarnings("restricted")} is written once. Opening never throws: {@link #problem()} says what was
 * tried and what to do.
 */
@SuppressWarnings("restricted")
final class SampleLibrary {
  private static final Linker LINKER = Linker.nativeLinker();

  private final NativeLibraryLookup.Found found; // null when not usable
  private final String problem;

  private SampleLibrary(NativeLibraryLookup.Found found, String problem) {
    this.found = found;
    this.problem = problem;
  }

  /**
   * Opens the library named by {@code property}, else {@code soname}, and checks that it has {@code
   * functions}.
   *
   * @param use what needs it, for the message ("the overlap sample's GPU compute")
   * @param installHint what to install where it is missing
   */
  static SampleLibrary open(String use, String soname, String property, List<String> functions,
      String installHint) {
    NativeLibraryLookup.Found found = NativeLibraryLookup.find(soname, property, System.getProperty(property),
        path -> SymbolLookup.libraryLookup(path, Arena.global()),
        name -> SymbolLookup.libraryLookup(name, Arena.global()));
    if (!found.isOpen()) {
      return new SampleLibrary(null, use + " needs " + soname + ", which was not found (tried: " + found.triedText()
          + "); " + installHint + " and put its folder on LD_LIBRARY_PATH, or start java with -D" + property
          + "=/path/to/" + soname);
    }
    List<String> missing = found.missing(functions);
    if (!missing.isEmpty()) {
      return new SampleLibrary(null, use + " needs " + soname + ", but " + found.loadedAs() + " lacks "
          + String.join(", ", missing) + "; set -D" + property + " to the path of " + soname);
    }
    return new SampleLibrary(found, null);
  }

  /** Null when the library is open and complete; else why it cannot be used and what to do. */
  String problem() {
    return problem;
  }

  /** A downcall handle for {@code function}; the caller checked {@link #problem()} first. */
  MethodHandle downcall(String function, FunctionDescriptor descriptor) {
    if (found == null) {
      throw new IllegalStateException(problem);
    }
    return LINKER.downcallHandle(found.symbol(function), descriptor);
  }

  /** The NUL-terminated string at {@code address} (a {@code const char*} the library returned), or "". */
  static String cString(MemorySegment address) {
    return address.address() == 0 ? "" : address.reinterpret(Long.MAX_VALUE).getString(0);
  }

  /**
   * What a downcall threw, to rethrow: an unchecked exception or error as it is; a checked one cannot come
   * from a downcall, but {@code invokeExact} declares {@code Throwable}.
   */
  static RuntimeException rethrown(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException("a downcall threw " + t, t);
  }
}
