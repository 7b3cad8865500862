package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.nccl.binding.NonFiniteKernels;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The finite check's PTX (runtime/src/main/resources/dev/commplan/runtime/kernels/nonfinite.ptx), without a GPU:
 * every kernel the NCCL backend launches ({@link NonFiniteKernels}) is an entry of it with the parameters its launch
 * lays out, in order; its entries are the CUDA source's {@code extern "C"} kernels; it targets the oldest architecture
 * CUDA 13 builds for and 64-bit addresses; and, where an nvcc of the release that wrote it is present, it is exactly
 * what {@code bin/ptx-update} makes from runtime/src/main/cuda/nonfinite.cu. Whether the kernels find what the host
 * search finds is {@code NcclFiniteGpuTest}'s, on a GPU.
 */
class NonFinitePtxTest {
  /** The runtime module's folder: the working directory under Maven, runtime/ from the project's root. */
  private static final Path MODULE = Files.isDirectory(Path.of("src/main/cuda")) ? Path.of("") : Path.of("runtime");
  private static final Path CUDA_SOURCE = MODULE.resolve("src/main/cuda/nonfinite.cu");
  private static final Path COMMITTED =
      MODULE.resolve("src/main/resources/dev/commplan/runtime/kernels/nonfinite.ptx");
  private static final Pattern ENTRY = Pattern.compile("\\.visible \\.entry (\\w+)\\(([^)]*)\\)");
  private static final Pattern PARAM = Pattern.compile("\\.param \\.(\\w+) (\\w+)");

  /** Per entry, its parameters' PTX types, in order. */
  private static Map<String, List<String>> entries(String ptx) {
    Map<String, List<String>> out = new LinkedHashMap<>();
    Matcher e = ENTRY.matcher(ptx);
    while (e.find()) {
      List<String> types = new ArrayList<>();
      Matcher p = PARAM.matcher(e.group(2));
      int i = 0;
      while (p.find()) {
        assertEquals(e.group(1) + "_param_" + i++, p.group(2), "parameter names of " + e.group(1));
        types.add(p.group(1));
      }
      out.put(e.group(1), types);
    }
    return out;
  }

  @Test
  void everyKernelTheBackendLaunchesIsAnEntryWithTheParametersItsLaunchLaysOut() {
    Map<String, List<String>> entries = entries(NonFiniteKernels.ptx());
    Map<String, List<String>> launched = new LinkedHashMap<>();
    for (int width : new int[] {1, 2, 4, 8}) {
      // (const T* data, u64 count, mask, u64* first): the mask an unsigned int below 8 bytes, read from its slot's
      // low bytes
      launched.put(NonFiniteKernels.searchKernel(width), List.of("u64", "u64", width == 8 ? "u64" : "u32", "u64"));
    }
    launched.put(NonFiniteKernels.VALUE_KERNEL, List.of("u64", "u32", "u64")); // (data, unsigned int width, first)
    assertEquals(launched, entries);
    assertEquals(List.of(4, 3), List.of(NonFiniteKernels.parameterCount(NonFiniteKernels.searchKernel(4)),
        NonFiniteKernels.parameterCount(NonFiniteKernels.VALUE_KERNEL)), "the launches' argument arrays");
    assertEquals("commplan_nonfinite_u16", NonFiniteKernels.searchKernel(2));
    assertThrows(IllegalArgumentException.class, () -> NonFiniteKernels.searchKernel(3));
  }

  @Test
  void itTargetsTheOldestArchitectureCuda13BuildsForWith64BitAddresses() {
    String ptx = NonFiniteKernels.ptx();
    assertTrue(ptx.contains("\n.target sm_75\n"), "the PTX targets compute_75, which every later GPU runs");
    assertTrue(ptx.contains("\n.address_size 64\n"));
    assertTrue(ptx.matches("(?s).*\n\\.version \\d+\\.\\d+\n.*"), "a .version line");
  }

  @Test
  void itsEntriesAreTheCudaSourcesKernels() throws IOException {
    String source = Files.readString(CUDA_SOURCE);
    List<String> kernels = new ArrayList<>();
    Matcher m = Pattern.compile("extern \"C\" __global__ void (\\w+)\\(").matcher(source);
    while (m.find()) {
      kernels.add(m.group(1));
    }
    assertEquals(kernels, List.copyOf(entries(NonFiniteKernels.ptx()).keySet()));
    assertEquals(Files.readString(COMMITTED, StandardCharsets.US_ASCII), NonFiniteKernels.ptx(),
        "the runtime reads the committed file");
  }

  /** Where nvcc of the release named in the PTX's header is present ($NVCC, else /usr/local/cuda/bin/nvcc). */
  @Test
  void itIsWhatPtxUpdateMakesFromTheSource(@TempDir Path dir) throws Exception {
    Path nvcc = Path.of(System.getenv().getOrDefault("NVCC", "/usr/local/cuda/bin/nvcc"));
    Assumptions.assumeTrue(Files.isExecutable(nvcc), "no nvcc at " + nvcc + ": the PTX is not regenerated here");
    String committed = Files.readString(COMMITTED, StandardCharsets.US_ASCII);
    Matcher release = Pattern.compile("Cuda compilation tools, release [^\n]*").matcher(committed);
    assertTrue(release.find(), "the PTX names the nvcc that wrote it");
    Process version = new ProcessBuilder(nvcc.toString(), "--version").redirectErrorStream(true).start();
    String versionText = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    Assumptions.assumeTrue(versionText.contains(release.group()),
        "nvcc here is not " + release.group() + ", whose output differs in its header and code: " + versionText);
    Path out = dir.resolve("nonfinite.ptx");
    Process p = new ProcessBuilder(nvcc.toString(), "-ptx", "-arch=compute_75", CUDA_SOURCE.toString(), "-o",
        out.toString()).redirectErrorStream(true).start();
    String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "nvcc took over 120 s");
    assertEquals(0, p.exitValue(), log);
    assertEquals(Files.readString(out, StandardCharsets.US_ASCII), committed,
        "the committed PTX is not what bin/ptx-update makes from nonfinite.cu: run bin/ptx-update and commit it");
  }
}
