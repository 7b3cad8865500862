package dev.commplan.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** What the MPI backend does without starting MPI: its timeout setting and its library check. */
class MpiBackendTest {
  @AfterEach
  void clear() {
    System.clearProperty(MpiBackend.TIMEOUT_PROPERTY);
  }

  @Test
  void theTimeoutComesFromThePropertyInSecondsOrIso() {
    assertEquals(MpiBackend.DEFAULT_TIMEOUT, MpiBackend.defaultTimeout());
    System.setProperty(MpiBackend.TIMEOUT_PROPERTY, "2.5");
    assertEquals(Duration.ofMillis(2500), MpiBackend.defaultTimeout());
    System.setProperty(MpiBackend.TIMEOUT_PROPERTY, "PT1M");
    assertEquals(Duration.ofMinutes(1), MpiBackend.defaultTimeout());
    System.setProperty(MpiBackend.TIMEOUT_PROPERTY, "soon");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, MpiBackend::defaultTimeout);
    assertTrue(e.getMessage().contains("-Dcommplan.mpi.timeout=soon is neither a number of seconds"), e.getMessage());
    System.setProperty(MpiBackend.TIMEOUT_PROPERTY, "0");
    assertThrows(IllegalArgumentException.class, MpiBackend::defaultTimeout);
  }

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
