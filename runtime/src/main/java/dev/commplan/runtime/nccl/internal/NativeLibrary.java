package dev.commplan.runtime.nccl.internal;

import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

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
  private final SymbolLookup lookup;
  private final String loadedAs;
  private final String problem;

  private NativeLibrary(String soname, SymbolLookup lookup, String loadedAs, String problem) {
    this.soname = soname;
    this.lookup = lookup;
    this.loadedAs = loadedAs;
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
          lib = open("NCCL", NCCL_SONAME, NCCL_PROPERTY, System.getProperty(NCCL_PROPERTY), Nccl.FUNCTIONS,
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
              Cuda.FUNCTIONS, "install the CUDA 13 runtime (cuda-cudart-13-0)");
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
    List<String> tried = new ArrayList<>();
    SymbolLookup lookup = null;
    String loadedAs = null;
    if (propertyValue != null && !propertyValue.isBlank()) {
      String value = propertyValue.strip();
      String source = "-D" + property + "=" + value;
      if (value.indexOf('/') >= 0) {
        Path path = Path.of(value);
        if (!Files.exists(path)) {
          tried.add(value + " (from " + source + "): no such file");
        } else {
          try {
            lookup = NativeAccess.openPath(path);
            loadedAs = path.toAbsolutePath() + " (from " + source + ")";
          } catch (IllegalArgumentException | IllegalCallerException e) {
            tried.add(value + " (from " + source + "): " + e.getMessage());
          }
        }
      } else {
        lookup = tryName(value, "from " + source, tried);
        loadedAs = lookup == null ? null : value + " (from " + source + ", by the dynamic loader)";
      }
    } else {
      lookup = tryName(soname, "by name", tried);
      loadedAs = lookup == null ? null : soname + " (by the dynamic loader)";
    }
    if (lookup == null) {
      String name = propertyValue != null && !propertyValue.isBlank() ? propertyValue.strip() : soname;
      return new NativeLibrary(soname, null, null,
          name + " not found (tried: " + String.join("; ", tried) + "). To use the NCCL backend, "
              + installHint + " and put its folder on LD_LIBRARY_PATH (or in /etc/ld.so.conf.d), or set -D"
              + property + "=/path/to/" + soname + " (a path or a library name) when starting java.");
    }
    List<String> missing = new ArrayList<>();
    for (String symbol : requiredSymbols) {
      if (lookup.find(symbol).isEmpty()) {
        missing.add(symbol);
      }
    }
    if (!missing.isEmpty()) {
      return new NativeLibrary(soname, null, null,
          loadedAs + " was opened but lacks " + String.join(", ", missing) + ": it is not the " + what
              + " library CommPlan binds to (" + soname + "); set -D" + property
              + " to the path of the right one.");
    }
    return new NativeLibrary(soname, lookup, loadedAs, null);
  }

  private static SymbolLookup tryName(String name, String how, List<String> tried) {
    try {
      return NativeAccess.openName(name);
    } catch (IllegalArgumentException | IllegalCallerException e) {
      tried.add(name + " (" + how + " through the dynamic loader: LD_LIBRARY_PATH, /etc/ld.so.cache, "
          + "/lib, /usr/lib): " + e.getMessage());
      return null;
    }
  }

  /** Whether the library opened and has every symbol CommPlan calls. */
  public boolean isLoaded() {
    return lookup != null;
  }

  /** What went wrong, or null when loaded. */
  public String problem() {
    return problem;
  }

  /** How it was found ("libnccl.so.2 (by the dynamic loader)"), or null when not loaded. */
  public String loadedAs() {
    return loadedAs;
  }

  /** The soname CommPlan binds to. */
  public String soname() {
    return soname;
  }

  /** Whether the library has {@code symbol}. */
  public boolean has(String symbol) {
    return lookup != null && lookup.find(symbol).isPresent();
  }

  /**
   * A downcall handle for {@code symbol}, or an {@link IllegalStateException} saying why there is none.
   * Callers check {@link #isLoaded()} first and report {@link #problem()} to users.
   */
  MethodHandle downcall(String symbol, FunctionDescriptor descriptor, Linker.Option... options) {
    if (lookup == null) {
      throw new IllegalStateException(problem);
    }
    Optional<MemorySegment> address = lookup.find(symbol);
    if (address.isEmpty()) {
      throw new IllegalStateException(loadedAs + " has no symbol " + symbol);
    }
    return NativeAccess.downcall(address.get(), descriptor, options);
  }

  /** Like {@link #downcall}, or null where the library lacks {@code symbol} (an optional function). */
  MethodHandle downcallIfPresent(String symbol, FunctionDescriptor descriptor, Linker.Option... options) {
    return has(symbol) ? downcall(symbol, descriptor, options) : null;
  }
}
