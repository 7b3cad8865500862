package dev.commplan.runtime.mpi.internal;

import dev.commplan.runtime.spi.NativeLibraryLookup;
import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;
import java.util.List;

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

  private final NativeLibraryLookup.Found found; // null when not loaded
  private final String problem;

  private MpiLibrary(NativeLibraryLookup.Found found, String problem) {
    this.found = found;
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
    NativeLibraryLookup.Found found = NativeLibraryLookup.find(
        SONAME, PROPERTY, propertyValue, MpiNativeAccess::openPath, MpiNativeAccess::openName);
    if (!found.isOpen()) {
      return new MpiLibrary(null, found.name() + " not found (tried: " + found.triedText()
          + "). To use the MPI backend, install Open MPI (Debian/Ubuntu: apt-get install openmpi-bin"
          + " libopenmpi-dev) or set -D" + PROPERTY + "=/path/to/" + SONAME + " when starting java.");
    }
    List<String> missing = found.missing(Mpi.REQUIRED_SYMBOLS);
    if (!missing.isEmpty()) {
      return new MpiLibrary(null, found.loadedAs() + " was opened but lacks " + String.join(", ", missing)
          + ": CommPlan's MPI backend binds to Open MPI's ABI (its predefined objects such as"
          + " ompi_mpi_comm_world); set -D" + PROPERTY + " to the path of Open MPI's " + SONAME + ".");
    }
    return new MpiLibrary(found, null);
  }

  /** Whether the library opened and has every symbol CommPlan uses. */
  public boolean isLoaded() {
    return found != null;
  }

  /** What went wrong, or null when loaded. */
  public String problem() {
    return problem;
  }

  /** How it was found, or null when not loaded. */
  public String loadedAs() {
    return found == null ? null : found.loadedAs();
  }

  /** The address of a global object of the library ({@code ompi_mpi_float}, ...). */
  long symbol(String name) {
    return loaded().symbol(name).address();
  }

  MethodHandle downcall(String name, FunctionDescriptor descriptor) {
    return MpiNativeAccess.downcall(loaded().symbol(name), descriptor);
  }

  private NativeLibraryLookup.Found loaded() {
    if (found == null) {
      throw new IllegalStateException(problem);
    }
    return found;
  }
}
