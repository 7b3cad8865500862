package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.guard.Failures;
import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.mpi.internal.MpiLibrary;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * MPI's process-wide state: initialized once ({@code MPI_Init_thread} asking for {@code
 * MPI_THREAD_SERIALIZED}), finalized once, by {@link MpiBackend#finalizeMpi()} or by a shutdown hook.
 * Every MPI call of the backend is made holding {@link #LOCK}, which is what {@code SERIALIZED} asks of
 * the caller: a communicator is used by its rank's thread, but the shutdown hook runs on another.
 */
final class MpiRuntime {
  /** Held around every MPI call. */
  static final ReentrantLock LOCK = new ReentrantLock();

  private static final int NOT_INITIALIZED = 0;
  private static final int INITIALIZED = 1;
  private static final int FINALIZED = 2;

  private static volatile int state = NOT_INITIALIZED; // written holding LOCK; read without it
  private static boolean initializedHere;
  private static int threadLevel = -1;
  private static final Set<MpiCommunicator> OPEN = ConcurrentHashMap.newKeySet();
  private static final Set<Object> UNTIL_FINALIZED = ConcurrentHashMap.newKeySet();
  /** The longest timeout of a family that failed in this process, in ns; 0 when none failed. */
  private static volatile long failedFamilyTimeout;
  private static volatile boolean finalizing;
  /** Set once {@link #finalizeMpi} closes what is still open: those closes compare no last calls. */
  private static volatile boolean closingAll;
  /** Set by the shutdown hook: the JVM is ending (mpirun ended the job, a signal, System.exit). */
  private static volatile boolean processEnding;

  private MpiRuntime() {}

  /** Why the backend cannot run here, or null; does not initialize MPI. */
  static String unavailableReason() {
    Module module = MpiRuntime.class.getModule();
    if (!module.isNativeAccessEnabled()) {
      String flag = "--enable-native-access=" + (module.isNamed() ? module.getName() : "ALL-UNNAMED");
      return "The MPI backend calls Open MPI through java.lang.foreign, and native access is not enabled for "
          + (module.isNamed() ? "module " + module.getName() : "the class path") + ". Start java with " + flag + ".";
    }
    MpiLibrary lib = MpiLibrary.get();
    if (!lib.isLoaded()) {
      return lib.problem();
    }
    LOCK.lock();
    try {
      if (state == FINALIZED) {
        return "MPI was finalized in this process (MpiBackend.finalizeMpi() or JVM shutdown); MPI cannot be"
            + " initialized twice in one process";
      }
    } finally {
      LOCK.unlock();
    }
    return null;
  }

  /** Initializes MPI if it is not (this process's first use); throws BackendUnavailableException saying why not. */
  static void ensureInitialized() {
    String reason = unavailableReason();
    if (reason != null) {
      throw new BackendUnavailableException(reason);
    }
    LOCK.lock();
    try {
      if (state == INITIALIZED) {
        requireThreadLevel();
        return;
      }
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment flag = arena.allocate(JAVA_INT);
        check("MPI_Finalized", Mpi.MPI_Finalized(flag.address()), "checking MPI's state");
        if (flag.get(JAVA_INT, 0) != 0) {
          state = FINALIZED;
          throw new BackendUnavailableException("MPI was already finalized in this process");
        }
        check("MPI_Initialized", Mpi.MPI_Initialized(flag.address()), "checking MPI's state");
        MemorySegment provided = arena.allocate(JAVA_INT);
        if (flag.get(JAVA_INT, 0) != 0) {
          // Someone else in this process initialized MPI: use it, and leave finalizing to them.
          check("MPI_Query_thread", Mpi.MPI_Query_thread(provided.address()), "querying the thread level");
        } else {
          check("MPI_Init_thread", Mpi.MPI_Init_thread(0, 0, Mpi.THREAD_SERIALIZED, provided.address()),
              "initializing MPI (is this process started by mpirun, or can Open MPI start as a singleton here?)");
          initializedHere = true;
          Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().name("commplan-mpi-finalize").unstarted(
              MpiRuntime::finalizeAtShutdown));
        }
        threadLevel = provided.get(JAVA_INT, 0);
        state = INITIALIZED;
        requireThreadLevel();
        // Open MPI reports an error of a non-blocking collective, raised when it completes, on MPI_COMM_WORLD
        // (the request has no communicator), whatever the collective's own communicator says: without this,
        // a count that differs between ranks ends the job in MPI_ERRORS_ARE_FATAL instead of an MpiException.
        check("MPI_Comm_set_errhandler", Mpi.MPI_Comm_set_errhandler(Mpi.Handles.COMM_WORLD, Mpi.Handles.ERRORS_RETURN),
            "setting MPI_ERRORS_RETURN on MPI_COMM_WORLD");
      }
    } finally {
      LOCK.unlock();
    }
  }

  private static void requireThreadLevel() {
    if (threadLevel < Mpi.THREAD_SERIALIZED) {
      throw new BackendUnavailableException("MPI provides thread level " + threadLevelName(threadLevel)
          + ", but the MPI backend needs MPI_THREAD_SERIALIZED or MPI_THREAD_MULTIPLE (it calls MPI from the"
          + " rank's thread and from its shutdown hook, one at a time)");
    }
  }

  /** The thread level MPI provides ({@code MPI_THREAD_SERIALIZED}, ...), or "not initialized". */
  static String threadLevel() {
    LOCK.lock();
    try {
      return state == INITIALIZED ? threadLevelName(threadLevel) : "not initialized";
    } finally {
      LOCK.unlock();
    }
  }

  static String threadLevelName(int level) {
    return switch (level) {
      case Mpi.THREAD_SINGLE -> "MPI_THREAD_SINGLE";
      case Mpi.THREAD_FUNNELED -> "MPI_THREAD_FUNNELED";
      case Mpi.THREAD_SERIALIZED -> "MPI_THREAD_SERIALIZED";
      case Mpi.THREAD_MULTIPLE -> "MPI_THREAD_MULTIPLE";
      default -> "thread level " + level;
    };
  }

  static boolean isInitialized() {
    return state == INITIALIZED;
  }

  /**
   * Whether a wait should yield the core between polls: where mpirun placed more processes than cores
   * ({@code OMPI_MCA_mpi_oversubscribe=1}), or where the user set Open MPI's own {@code mpi_yield_when_idle}
   * (the same two signals Open MPI's progress loop follows). Otherwise every rank has a core and waits spin.
   */
  static boolean yieldWhenIdle() {
    return "1".equals(System.getenv("OMPI_MCA_mpi_oversubscribe"))
        || "1".equals(System.getenv("OMPI_MCA_mpi_yield_when_idle"))
        || "true".equalsIgnoreCase(System.getenv("OMPI_MCA_mpi_yield_when_idle"));
  }

  /**
   * A family with this timeout failed: {@code MPI_Finalize}, which waits for every process of the job, is
   * then waited for at most that long ({@link #finalizeMpi}).
   */
  static void familyFailed(long timeoutNanos) {
    failedFamilyTimeout = Math.max(failedFamilyTimeout, timeoutNanos);
  }

  /**
   * Why a communicator that this process closed for its user cannot be used, where the process is being ended
   * (its shutdown hook closed it), or null: a rank told "is closed" would think its own code closed it.
   */
  static String endingReason() {
    return processEnding ? "was closed because this process is being ended (its JVM runs its shutdown hooks: mpirun"
        + " ended the job, a signal arrived, or System.exit was called)" : null;
  }

  /** Whether {@link #finalizeMpi} is closing what the program left open (closes that compare nothing). */
  static boolean closingAll() {
    return closingAll;
  }

  /**
   * Keeps {@code owner} reachable until {@code MPI_Finalize} returned: it holds memory that MPI may still read
   * or write (the scratch block of a call a failure left in flight, a posted receive's buffer), which the
   * garbage collector would otherwise free under MPI.
   */
  static void keepUntilFinalized(Object owner) {
    UNTIL_FINALIZED.add(owner);
  }

  static void register(MpiCommunicator comm) {
    OPEN.add(comm);
  }

  static void forget(MpiCommunicator comm) {
    OPEN.remove(comm);
  }

  /**
   * Closes every open communicator and calls {@code MPI_Finalize} (if this backend initialized MPI). After
   * it, MPI cannot be used again in this process.
   */
  static void finalizeMpi() {
    RuntimeException failure = null;
    closingAll = true; // in no order the ranks share, maybe at JVM exit after a failure: nothing to wait for
    for (MpiCommunicator comm : new ArrayList<>(OPEN)) {
      try {
        comm.close();
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
    }
    if (failedFamilyTimeout > 0 && state == INITIALIZED && initializedHere && !boundedFinalize()) {
      return; // the note is printed; the process goes on without MPI, and mpirun ends the job when it exits
    }
    LOCK.lock();
    try {
      if (state == INITIALIZED && initializedHere) {
        int rc = Mpi.MPI_Finalize();
        state = FINALIZED;
        UNTIL_FINALIZED.clear();
        if (rc != Mpi.SUCCESS) {
          MpiException e = error("MPI_Finalize", rc, "finalizing MPI");
          if (failure != null) {
            e.addSuppressed(failure);
          }
          throw e;
        }
      } else if (state == INITIALIZED) {
        state = FINALIZED; // not ours to finalize; we just stop using it
      }
    } finally {
      LOCK.unlock();
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * After a family failed: {@code MPI_Finalize} waits for every process of the job, and a peer that stalled
   * may never come; so it runs on a daemon thread, waited for at most the failed family's timeout. Returns
   * whether it finished (or is not this process's to call); if not, says so on standard error, and the
   * process may exit without it (mpirun then ends the job).
   */
  private static boolean boundedFinalize() {
    Thread finalizer = Thread.ofPlatform().daemon().name("commplan-mpi-finalize").unstarted(() -> {
      LOCK.lock();
      try {
        if (state == INITIALIZED) {
          Mpi.MPI_Finalize();
          state = FINALIZED;
          UNTIL_FINALIZED.clear();
        }
      } finally {
        LOCK.unlock();
      }
    });
    finalizing = true;
    finalizer.start();
    long wait = failedFamilyTimeout;
    try {
      finalizer.join(Duration.ofNanos(wait));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (finalizer.isAlive()) {
      System.err.printf(Locale.ROOT, "commplan mpi: MPI_Finalize waited %.1f s (the failed family's timeout)"
          + " for the other processes of the job; one of them stalled or is still working, so this process ends"
          + " without it (mpirun then ends the job)%n", wait / 1e9);
      System.err.flush();
      return false;
    }
    return true;
  }

  /** The shutdown hook: finalizes unless the rank's thread still holds MPI (then mpirun reports it). */
  private static void finalizeAtShutdown() {
    processEnding = true;
    if (finalizing) {
      return; // a bounded finalize gave up on MPI_Finalize already
    }
    try {
      if (!LOCK.tryLock(5, TimeUnit.SECONDS)) {
        System.err.println("commplan mpi: MPI is busy on another thread at JVM exit; not finalizing");
        return;
      }
      try {
        if (state != INITIALIZED) {
          return;
        }
      } finally {
        LOCK.unlock();
      }
      finalizeMpi();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      System.err.println("commplan mpi: finalizing at JVM exit failed: " + e.getMessage());
    }
  }

  // ---------------------------------------------------------------- errors

  static void check(String function, int rc, String what) {
    if (rc != Mpi.SUCCESS) {
      throw error(function, rc, what);
    }
  }

  /**
   * {@code MPI_Comm_dup} of {@code comm}, with {@code MPI_ERRORS_RETURN} set on the copy (collective: every rank
   * of {@code comm} calls it, in the same order); {@code what} the copy is, for errors. Holding the lock.
   */
  static long dup(long comm, String what) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_LONG);
      check("MPI_Comm_dup", Mpi.MPI_Comm_dup(comm, out.address()), "making " + what);
      long copy = out.get(JAVA_LONG, 0);
      check("MPI_Comm_set_errhandler", Mpi.MPI_Comm_set_errhandler(copy, Mpi.Handles.ERRORS_RETURN),
          "setting MPI_ERRORS_RETURN on " + what);
      return copy;
    }
  }

  static MpiException error(String function, int rc, String what) {
    return new MpiException(function, rc, function + " failed while " + what + ": " + errorString(rc)
        + " (MPI error " + rc + ")");
  }

  /** {@code MPI_Error_string}'s text for {@code code}. */
  static String errorString(int code) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment text = arena.allocate(Mpi.MAX_STRING + 1);
      MemorySegment length = arena.allocate(JAVA_INT);
      int rc = Mpi.MPI_Error_string(code, text.address(), length.address());
      if (rc != Mpi.SUCCESS) {
        return "unknown MPI error";
      }
      return string(text, length);
    }
  }

  /** {@code MPI_Get_library_version} (callable before MPI_Init). */
  static String libraryVersion() {
    String reason = unavailableReason();
    if (reason != null) {
      throw new BackendUnavailableException(reason);
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment text = arena.allocate(Mpi.MAX_STRING + 1);
      MemorySegment length = arena.allocate(JAVA_INT);
      LOCK.lock();
      try {
        check("MPI_Get_library_version", Mpi.MPI_Get_library_version(text.address(), length.address()),
            "reading the library version");
      } finally {
        LOCK.unlock();
      }
      return string(text, length);
    }
  }

  /** The {@code length} chars MPI wrote into {@code text} (up to a NUL), stripped. */
  private static String string(MemorySegment text, MemorySegment length) {
    int n = Math.max(0, Math.min(Mpi.MAX_STRING, length.get(JAVA_INT, 0)));
    byte[] bytes = new byte[n];
    MemorySegment.copy(text, JAVA_BYTE, 0, bytes, 0, n);
    String value = new String(bytes, StandardCharsets.UTF_8);
    int nul = value.indexOf('\0');
    return (nul >= 0 ? value.substring(0, nul) : value).strip();
  }
}
