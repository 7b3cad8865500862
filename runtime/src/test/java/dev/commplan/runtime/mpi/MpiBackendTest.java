package dev.commplan.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** What the MPI backend does without starting MPI: its library check. */
class MpiBackendTest {
  @Test
  void unavailableReasonIsNullOrSaysWhatToInstall() {
    String reason = MpiBackend.unavailableReason();
    if (reason != null) {
      assertTrue(reason.contains("libmpi.so.40") || reason.contains("native access"), reason);
    } else {
      assertTrue(MpiBackend.libraryVersion().startsWith("Open MPI"), MpiBackend.libraryVersion());
    }
  }
}
