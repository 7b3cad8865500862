package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.NativeAccessMessage;
import dev.commplan.runtime.nccl.binding.NcclEnums;
import dev.commplan.runtime.nccl.binding.raw.NativeLibrary;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What runs everywhere, GPU or not: the messages a user sees when something is missing, and the pure
 * parts of the binding (version decoding, code tables, exception texts).
 */
class NcclWithoutGpuTest {

  // ---------------------------------------------------------------- no GPU here: clear errors

  @Test
  void withoutAGpuTheErrorSaysWhatIsMissing() {
    String reason = NcclBackend.unavailableReason(1);
    assumeTrue(reason != null, "NCCL and a CUDA device are present: nothing is missing to report");
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class, () -> NcclBackend.cluster(1));
    String m = e.getMessage();
    assertEquals(reason, m);
    if (!NativeLibrary.cudart().isLoaded()) {
      assertTrue(m.contains("libcudart.so.13") && m.contains("-Dcommplan.cudart.library"), m);
    } else if (m.startsWith("no CUDA device") || m.startsWith("no usable CUDA device")) {
      assertTrue(m.contains("cudaGetDeviceCount"), m);
    } else {
      assertTrue(m.contains("libnccl.so.2") && m.contains("-Dcommplan.nccl.library"), m);
    }
  }

  @Test
  void withTheCudaRuntimeButNoDeviceTheErrorSaysThereIsNoCudaDevice() {
    assumeTrue(NativeLibrary.cudart().isLoaded(), "libcudart.so.13 is not on this machine");
    long raw = CheckedCuda.cudaGetDeviceCountRaw();
    assumeTrue((raw >>> 32) != 0 || raw == 0, "this machine has a CUDA device");
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class, () -> NcclBackend.cluster(1));
    assertTrue(e.getMessage().startsWith("no CUDA device"), e.getMessage());
    assertTrue(e.getMessage().contains("cudaGetDeviceCount returned cudaError"), e.getMessage());
    // The same through the backend registry, which is how samples reach it.
    CommPlanException viaBackends = assertThrows(CommPlanException.class, () -> Backends.cluster("nccl", 1));
    assertTrue(viaBackends.getMessage().contains("no CUDA device"), viaBackends.getMessage());
  }

  @Test
  void withoutNcclUniqueIdNamesTheLibraryAndTheProperty() {
    assumeTrue(!NativeLibrary.nccl().isLoaded(), "libnccl.so.2 is present here");
    BackendUnavailableException e = assertThrows(BackendUnavailableException.class, NcclBackend::uniqueId);
    assertTrue(e.getMessage().startsWith("libnccl.so.2 not found (tried: libnccl.so.2"), e.getMessage());
    assertTrue(e.getMessage().contains("-Dcommplan.nccl.library=/path/to/libnccl.so.2"), e.getMessage());
  }

  @Test
  void clusterOfZeroRanksIsAnArgumentError() {
    assertThrows(IllegalArgumentException.class, () -> NcclBackend.cluster(0));
  }

  // ---------------------------------------------------------------- library loading (no GPU needed)

  @Test
  void aMissingLibraryByNameListsWhatWasTriedAndTheProperty() {
    NativeLibrary lib = NativeLibrary.open("NCCL", "libnccl.so.2", NativeLibrary.NCCL_PROPERTY,
        "libcommplan-not-there.so.9", List.of("ncclGetVersion"), "install NCCL 2");
    assertFalse(lib.isLoaded());
    String m = lib.problem();
    assertTrue(m.startsWith("libcommplan-not-there.so.9 not found (tried: libcommplan-not-there.so.9 (from"
        + " -Dcommplan.nccl.library=libcommplan-not-there.so.9"), m);
    assertTrue(m.contains("set -Dcommplan.nccl.library=/path/to/libnccl.so.2 (a path or a library name)"), m);
    assertTrue(m.contains("LD_LIBRARY_PATH"), m);
  }

  @Test
  void aMissingLibraryByPathSaysNoSuchFile() {
    NativeLibrary lib = NativeLibrary.open("the CUDA runtime", "libcudart.so.13", NativeLibrary.CUDART_PROPERTY,
        "/nonexistent/dir/libcudart.so.13", List.of(), "install CUDA");
    assertFalse(lib.isLoaded());
    assertTrue(lib.problem().contains("/nonexistent/dir/libcudart.so.13 (from -Dcommplan.cudart.library="
        + "/nonexistent/dir/libcudart.so.13): no such file"), lib.problem());
  }

  @Test
  void theDefaultIsTheSonameThroughTheDynamicLoader() {
    NativeLibrary lib = NativeLibrary.open("NCCL", "libcommplan-absent.so.2", NativeLibrary.NCCL_PROPERTY, null,
        List.of(), "install NCCL 2");
    assertFalse(lib.isLoaded());
    assertTrue(lib.problem().startsWith("libcommplan-absent.so.2 not found (tried: libcommplan-absent.so.2 (by"
        + " name through the dynamic loader"), lib.problem());
  }

  @Test
  void aLibraryWithoutTheFunctionsIsNotTakenForNccl() {
    NativeLibrary lib = NativeLibrary.open("NCCL", "libnccl.so.2", NativeLibrary.NCCL_PROPERTY, "libc.so.6",
        List.of("ncclGetVersion", "ncclCommInitAll"), "install NCCL 2");
    assumeTrue(lib.problem() == null || !lib.problem().contains("not found"), "no libc.so.6 here");
    assertFalse(lib.isLoaded());
    assertTrue(lib.problem().contains("lacks ncclGetVersion, ncclCommInitAll"), lib.problem());
    assertTrue(lib.problem().contains("-Dcommplan.nccl.library"), lib.problem());
  }

  // ---------------------------------------------------------------- native access message

  @Test
  void nativeAccessMessageNamesTheFlagForTheClassPath() {
    Module unnamed = NcclWithoutGpuTest.class.getClassLoader().getUnnamedModule();
    assertEquals("--enable-native-access=ALL-UNNAMED", NativeAccessMessage.flag(unnamed));
    String m = NativeAccessMessage.forModule(unnamed);
    assertTrue(m.contains("native access is not enabled for the class path"), m);
    assertTrue(m.contains("Start java with --enable-native-access=ALL-UNNAMED"), m);
    assertTrue(m.contains("Enable-Native-Access: ALL-UNNAMED"), m);
  }

  @Test
  void nativeAccessMessageNamesTheModuleOnTheModulePath() {
    Module named = Object.class.getModule(); // any named module will do: java.base
    assertEquals("--enable-native-access=java.base", NativeAccessMessage.flag(named));
    assertTrue(NativeAccessMessage.forModule(named).contains("module java.base. Start java with "
        + "--enable-native-access=java.base"), NativeAccessMessage.forModule(named));
  }

  @Test
  void testsRunWithNativeAccessEnabled() {
    assertTrue(NcclBackend.class.getModule().isNativeAccessEnabled(),
        "surefire's argLine should carry --enable-native-access=ALL-UNNAMED");
  }

  // ---------------------------------------------------------------- pure parts of the binding

  @Test
  void versionCodesDecodeAsNcclEncodesThem() {
    assertEquals(new NcclVersion(2, 28, 3), NcclVersion.decode(22803));
    assertEquals(new NcclVersion(2, 8, 4), NcclVersion.decode(2804));
    assertEquals(new NcclVersion(2, 10, 3), NcclVersion.decode(21003));
    assertEquals(22803, new NcclVersion(2, 28, 3).code());
    assertEquals(2804, new NcclVersion(2, 8, 4).code());
    assertEquals("2.28.3", NcclVersion.decode(22803).toString());
    assertTrue(NcclVersion.decode(22803).atLeast(NcclVersion.AVG_AND_BF16));
    assertFalse(NcclVersion.decode(2804).atLeast(NcclVersion.AVG_AND_BF16));
    assertFalse(NcclVersion.decode(21002).atLeast(NcclVersion.AVG_AND_BF16));
    assertTrue(NcclVersion.decode(22403).atLeast(NcclVersion.FP8));
    assertFalse(NcclVersion.decode(22304).atLeast(NcclVersion.FP8));
    assertEquals("2.24.3", NcclVersion.FP8.toString());
    assertEquals("2.28.3", NcclVersion.GATHER_SCATTER_ALLTOALL.toString());
  }

  @Test
  void enumValuesAreNcclHs() {
    // F16, BF16, F32, F64, I8, U8, I32, U32, I64, U64, F8E4M3, F8E5M2 (nccl.h: ncclFloat8e4m3 = 10, ncclFloat8e5m2 = 11)
    int[] expected = {6, 9, 7, 8, 0, 1, 2, 3, 4, 5, 10, 11};
    assertEquals(expected.length, DataType.values().length);
    DataType[] types = DataType.values();
    for (int i = 0; i < types.length; i++) {
      assertEquals(expected[i], NcclEnums.dataType(types[i]), types[i].name());
    }
    assertEquals(0, NcclEnums.op(ReduceOp.SUM));
    assertEquals(1, NcclEnums.op(ReduceOp.PROD));
    assertEquals(2, NcclEnums.op(ReduceOp.MAX));
    assertEquals(3, NcclEnums.op(ReduceOp.MIN));
    assertEquals(4, NcclEnums.op(ReduceOp.AVG));
    for (NcclResult r : NcclResult.values()) {
      if (r != NcclResult.UNKNOWN) {
        assertEquals(r, NcclResult.of(r.code()));
      }
    }
    assertEquals(NcclResult.INVALID_ARGUMENT, NcclResult.of(4));
    assertEquals(NcclResult.IN_PROGRESS, NcclResult.of(7));
    assertEquals(NcclResult.UNKNOWN, NcclResult.of(77));
    assertEquals(CudaError.NO_DEVICE, CudaError.of(100));
    assertEquals(CudaError.OTHER, CudaError.of(12345));
  }

  @Test
  void ncclExceptionCarriesCodeTextsAndFunction() {
    NcclException e = new NcclException("ncclAllReduce", 4, "invalid argument (run with NCCL_DEBUG=WARN for details)",
        "Invalid root 3, nranks 1");
    assertEquals("ncclAllReduce", e.function());
    assertEquals(NcclResult.INVALID_ARGUMENT, e.result());
    assertEquals(4, e.rawCode());
    assertTrue(e.getMessage().startsWith("ncclAllReduce failed: ncclInvalidArgument (4): invalid argument"),
        e.getMessage());
    // ncclGetLastError is process-wide and never cleared: the message must not claim it is this call's
    assertTrue(e.getMessage().contains("NCCL's last warning in this process (ncclGetLastError; it may be from an"
        + " earlier failure): Invalid root 3, nranks 1"), e.getMessage());
    assertTrue(e instanceof CommPlanException);
    NcclException unknown = new NcclException("ncclGroupEnd", 42, null, null);
    assertEquals(NcclResult.UNKNOWN, unknown.result());
    assertEquals(42, unknown.rawCode());
  }

  @Test
  void cudaExceptionCarriesCodeNameTextAndFunction() {
    CudaException e = new CudaException("cudaSetDevice", 101, "cudaErrorInvalidDevice", "invalid device ordinal");
    assertEquals(CudaError.INVALID_DEVICE, e.error());
    assertEquals("cudaErrorInvalidDevice", e.cudaName());
    assertEquals("cudaSetDevice failed: cudaErrorInvalidDevice (101): invalid device ordinal", e.getMessage());
    assertNull(new CudaException("cudaFree", 9999, null, null).cudaName());
  }
}
