package dev.commplan.runtime.nccl.binding.raw;

import dev.commplan.runtime.spi.NativeLibraryLookup;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.stream.Stream;

/**
 * A native library opened by soname or by the path or name a system property gives, with what was tried
 * when it could not be opened. Opening never throws: {@link #problem()} says what went wrong, in words a
 * user can act on, and {@link #downcall} refuses to run on a library that did not open.
 */
public final class NativeLibrary {
  /** System property naming the NCCL library to load: a path or a name. */
  public static final String NCCL_PROPERTY = "commplan.nccl.library";
  /** System property naming the CUDA runtime library to load: a path or a name. */
  public static final String CUDART_PROPERTY = "commplan.cudart.library";
  /** NCCL's soname (NCCL 2). */
  public static final String NCCL_SONAME = "libnccl.so.2";
  /** The CUDA 13 runtime's soname. */
  public static final String CUDART_SONAME = "libcudart.so.13";

  private final String soname;
  private final NativeLibraryLookup.Found found; // null when not loaded
  private final String problem;

  private NativeLibrary(String soname, NativeLibraryLookup.Found found, String problem) {
    this.soname = soname;
    this.found = found;
    this.problem = problem;
  }

  private static volatile NativeLibrary nccl;
  private static volatile NativeLibrary cudart;

  /** NCCL, opened once per JVM ({@value #NCCL_PROPERTY}, else {@value #NCCL_SONAME}). */
  public static NativeLibrary nccl() {
    NativeLibrary lib = nccl;
    if (lib == null) {
      synchronized (NativeLibrary.class) {
        lib = nccl;
        if (lib == null) {
          lib = open("NCCL", NCCL_SONAME, NCCL_PROPERTY, System.getProperty(NCCL_PROPERTY), NcclSymbols.REQUIRED,
              "install NCCL 2 (the libnccl2 package)");
          nccl = lib;
        }
      }
    }
    return lib;
  }

  /** The CUDA runtime, opened once per JVM ({@value #CUDART_PROPERTY}, else {@value #CUDART_SONAME}). */
  public static NativeLibrary cudart() {
    NativeLibrary lib = cudart;
    if (lib == null) {
      synchronized (NativeLibrary.class) {
        lib = cudart;
        if (lib == null) {
          lib = open("the CUDA runtime", CUDART_SONAME, CUDART_PROPERTY, System.getProperty(CUDART_PROPERTY),
              Stream.of(Cuda.FUNCTIONS, CudaGraphs.FUNCTIONS, CudaStreamOrderedMemory.FUNCTIONS)
                  .flatMap(List::stream).toList(), "install the CUDA 13 runtime (cuda-cudart-13-0)");
          cudart = lib;
        }
      }
    }
    return lib;
  }

  /**
   * Opens a library: {@code propertyValue} when set (a path if it contains '/', else a name for the
   * dynamic loader), else {@code soname}; then checks that every one of {@code requiredSymbols} is
   * there. Never throws; the result says what happened.
   *
   * @param what the library in words, for messages ("NCCL")
   * @param installHint what to install, for messages
   */
  public static NativeLibrary open(String what, String soname, String property, String propertyValue,
      List<String> requiredSymbols, String installHint) {
    NativeLibraryLookup.Found found =
        NativeLibraryLookup.find(soname, property, propertyValue, NativeAccess::openPath, NativeAccess::openName);
    if (!found.isOpen()) {
      return new NativeLibrary(soname, null,
          found.name() + " not found (tried: " + found.triedText() + "). To use the NCCL backend, "
              + installHint + " and put its folder on LD_LIBRARY_PATH (or in /etc/ld.so.conf.d), or set -D"
              + property + "=/path/to/" + soname + " (a path or a library name) when starting java.");
    }
    List<String> missing = found.missing(requiredSymbols);
    if (!missing.isEmpty()) {
      return new NativeLibrary(soname, null,
          found.loadedAs() + " was opened but lacks " + String.join(", ", missing) + ": it is not the " + what
              + " library CommPlan binds to (" + soname + "); set -D" + property
              + " to the path of the right one.");
    }
    return new NativeLibrary(soname, found, null);
  }

  /** Whether the library opened and has every symbol CommPlan calls. */
  public boolean isLoaded() {
    return found != null;
  }

  /** What went wrong, or null when loaded. */
  public String problem() {
    return problem;
  }

  /** How it was found ("libnccl.so.2 (by the dynamic loader)"), or null when not loaded. */
  public String loadedAs() {
    return found == null ? null : found.loadedAs();
  }

  /** The soname CommPlan binds to. */
  public String soname() {
    return soname;
  }

  /** Whether the library has {@code symbol}. */
  public boolean has(String symbol) {
    return found != null && found.lookup().find(symbol).isPresent();
  }

  /**
   * A downcall handle for {@code symbol}, or an {@link IllegalStateException} saying why there is none.
   * Callers check {@link #isLoaded()} first and report {@link #problem()} to users.
   */
  MethodHandle downcall(String symbol, FunctionDescriptor descriptor, Linker.Option... options) {
    if (found == null) {
      throw new IllegalStateException(problem);
    }
    return NativeAccess.downcall(found.symbol(symbol), descriptor, options);
  }

  /** Like {@link #downcall}, or null where the library lacks {@code symbol} (an optional function). */
  MethodHandle downcallIfPresent(String symbol, FunctionDescriptor descriptor, Linker.Option... options) {
    return has(symbol) ? downcall(symbol, descriptor, options) : null;
  }
}
