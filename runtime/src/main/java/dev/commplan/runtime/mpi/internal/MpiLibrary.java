package dev.commplan.runtime.mpi.internal;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Open MPI's {@code libmpi.so.40}, opened once per JVM by soname or where {@value #PROPERTY} says (a
 * path, or a name for the dynamic loader). Opening never throws: {@link #problem()} says what was tried
 * and what to do.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class MpiLibrary {
  /** System property naming the MPI library to load: a path or a name. */
  public static final String PROPERTY = "commplan.mpi.library";
  /** Open MPI 3.x/4.x/5.x's soname. */
  public static final String SONAME = "libmpi.so.40";

  private static volatile MpiLibrary instance;

  private final SymbolLookup lookup;
  private final String loadedAs;
  private final String problem;

  private MpiLibrary(SymbolLookup lookup, String loadedAs, String problem) {
    this.lookup = lookup;
    this.loadedAs = loadedAs;
    this.problem = problem;
  }

  /** The library, opened on first use. */
  public static MpiLibrary get() {
    MpiLibrary lib = instance;
    if (lib == null) {
      synchronized (MpiLibrary.class) {
        lib = instance;
        if (lib == null) {
          lib = open(System.getProperty(PROPERTY));
          instance = lib;
        }
      }
    }
    return lib;
  }

  static MpiLibrary open(String propertyValue) {
    List<String> tried = new ArrayList<>();
    SymbolLookup lookup = null;
    String loadedAs = null;
    String name = SONAME;
    if (propertyValue != null && !propertyValue.isBlank()) {
      name = propertyValue.strip();
      String source = "-D" + PROPERTY + "=" + name;
      if (name.indexOf('/') >= 0) {
        Path path = Path.of(name);
        if (!Files.exists(path)) {
          tried.add(name + " (from " + source + "): no such file");
        } else {
          try {
            lookup = MpiNativeAccess.openPath(path);
            loadedAs = path.toAbsolutePath() + " (from " + source + ")";
          } catch (IllegalArgumentException | IllegalCallerException e) {
            tried.add(name + " (from " + source + "): " + e.getMessage());
          }
        }
      } else {
        lookup = tryName(name, "from " + source, tried);
        loadedAs = lookup == null ? null : name + " (from " + source + ", by the dynamic loader)";
      }
    } else {
      lookup = tryName(SONAME, "by name", tried);
      loadedAs = lookup == null ? null : SONAME + " (by the dynamic loader)";
    }
    if (lookup == null) {
      return new MpiLibrary(null, null, name + " not found (tried: " + String.join("; ", tried)
          + "). To use the MPI backend, install Open MPI (Debian/Ubuntu: apt-get install openmpi-bin"
          + " libopenmpi-dev) or set -D" + PROPERTY + "=/path/to/" + SONAME + " when starting java.");
    }
    List<String> missing = new ArrayList<>();
    for (String symbol : Mpi.REQUIRED_SYMBOLS) {
      if (lookup.find(symbol).isEmpty()) {
        missing.add(symbol);
      }
    }
    if (!missing.isEmpty()) {
      return new MpiLibrary(null, null, loadedAs + " was opened but lacks " + String.join(", ", missing)
          + ": CommPlan's MPI backend binds to Open MPI's ABI (its predefined objects such as"
          + " ompi_mpi_comm_world); set -D" + PROPERTY + " to the path of Open MPI's " + SONAME + ".");
    }
    return new MpiLibrary(lookup, loadedAs, null);
  }

  private static SymbolLookup tryName(String name, String how, List<String> tried) {
    try {
      return MpiNativeAccess.openName(name);
    } catch (IllegalArgumentException | IllegalCallerException e) {
      tried.add(name + " (" + how + " through the dynamic loader: LD_LIBRARY_PATH, /etc/ld.so.cache, /lib, /usr/lib): "
          + e.getMessage());
      return null;
    }
  }

  /** Whether the library opened and has every symbol CommPlan uses. */
  public boolean isLoaded() {
    return lookup != null;
  }

  /** What went wrong, or null when loaded. */
  public String problem() {
    return problem;
  }

  /** How it was found, or null when not loaded. */
  public String loadedAs() {
    return loadedAs;
  }

  /** The address of a global object of the library ({@code ompi_mpi_float}, ...). */
  long symbol(String name) {
    if (lookup == null) {
      throw new IllegalStateException(problem);
    }
    Optional<MemorySegment> address = lookup.find(name);
    if (address.isEmpty()) {
      throw new IllegalStateException(loadedAs + " has no symbol " + name);
    }
    return address.get().address();
  }

  MethodHandle downcall(String name, FunctionDescriptor descriptor) {
    if (lookup == null) {
      throw new IllegalStateException(problem);
    }
    Optional<MemorySegment> address = lookup.find(name);
    if (address.isEmpty()) {
      throw new IllegalStateException(loadedAs + " has no symbol " + name);
    }
    return MpiNativeAccess.downcall(address.get(), descriptor);
  }
}
