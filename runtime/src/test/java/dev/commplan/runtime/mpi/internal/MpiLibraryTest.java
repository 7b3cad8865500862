package dev.commplan.runtime.mpi.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Opening the library: what a wrong -Dcommplan.mpi.library says. */
class MpiLibraryTest {
  @Test
  void aMissingFileSaysWhatWasTriedAndWhatToInstall() {
    MpiLibrary lib = MpiLibrary.open("/no/such/libmpi.so.40");
    assertFalse(lib.isLoaded());
    assertTrue(lib.problem().contains("/no/such/libmpi.so.40 (from -Dcommplan.mpi.library=/no/such/libmpi.so.40): no such file"),
        lib.problem());
    assertTrue(lib.problem().contains("apt-get install openmpi-bin libopenmpi-dev"), lib.problem());
  }

  @Test
  void aLibraryThatIsNotOpenMpiIsNamed() {
    MpiLibrary lib = MpiLibrary.open("libc.so.6");
    assertFalse(lib.isLoaded());
    assertTrue(lib.problem().contains("lacks MPI_Init_thread"), lib.problem());
  }
}
