package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** How the samples' own native libraries (cuBLAS, the CUDA runtime's events) say that they cannot be used. */
class SampleLibraryTest {
  private static final String PROPERTY = "commplan.samples.test.library";

  private static SampleLibrary open(String propertyValue, String soname, List<String> functions) {
    String before = System.getProperty(PROPERTY);
    try {
      if (propertyValue == null) {
        System.clearProperty(PROPERTY);
      } else {
        System.setProperty(PROPERTY, propertyValue);
      }
      return SampleLibrary.open("a test", soname, PROPERTY, functions, "install it");
    } finally {
      if (before == null) {
        System.clearProperty(PROPERTY);
      } else {
        System.setProperty(PROPERTY, before);
      }
    }
  }

  @Test
  void aMissingLibraryIsNamedWithWhatWasTriedAndWhatToDo() {
    String problem = open(null, "libcommplan-none.so.7", List.of("f")).problem();
    assertTrue(problem.startsWith("a test needs libcommplan-none.so.7, which was not found (tried: libcommplan-none"
        + ".so.7 (by name through the dynamic loader"), problem);
    assertTrue(problem.endsWith("; install it and put its folder on LD_LIBRARY_PATH, or start java with -D" + PROPERTY
        + "=/path/to/libcommplan-none.so.7"), problem);
    assertTrue(open("/no/such/libx.so", "libx.so", List.of("f")).problem().contains("/no/such/libx.so (from -D"
        + PROPERTY + "=/no/such/libx.so): no such file"));
  }

  @Test
  void aLibraryWithoutTheFunctionsIsRefused() {
    SampleLibrary libc = open(null, "libc.so.6", List.of("malloc", "cublasSgemm_v2"));
    assertEquals("a test needs libc.so.6, but libc.so.6 (by the dynamic loader) lacks cublasSgemm_v2; set -D" + PROPERTY
        + " to the path of libc.so.6", libc.problem());
    assertTrue(assertThrows(IllegalStateException.class, () -> libc.downcall("malloc", null)).getMessage()
        .contains("lacks cublasSgemm_v2"));
    assertNull(open(null, "libc.so.6", List.of("malloc")).problem());
  }

  /** Where cuBLAS is missing (no CUDA toolkit here), making a handle says so instead of crashing. */
  @Test
  void withoutCublasAHandleIsRefusedSayingWhy() {
    String reason = Cublas.unavailableReason();
    assumeTrue(reason != null, "cuBLAS is installed here");
    assertTrue(reason.contains(Cublas.SONAME) && reason.contains("-D" + Cublas.PROPERTY + "="), reason);
    assertEquals(reason, assertThrows(IllegalStateException.class, () -> Cublas.create(0)).getMessage());
  }
}
