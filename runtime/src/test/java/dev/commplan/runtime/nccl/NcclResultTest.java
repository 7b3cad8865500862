package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.CommPlanException;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Offline (no GPU, no NCCL library): every {@code ncclResult_t} of NCCL 2.28's {@code nccl.h} maps to its
 * constant and to an {@link NcclException} that names it, and which codes are fatal for the communicator.
 */
class NcclResultTest {
  /** nccl.h, in order of value: {@code ncclSuccess = 0} .. {@code ncclTimeout = 8} ({@code ncclNumResults} is a count). */
  private static final List<String> NCCL_H = List.of("ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
      "ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress", "ncclTimeout");

  private static final Set<NcclResult> RECOVERABLE = EnumSet.of(NcclResult.INVALID_ARGUMENT, NcclResult.INVALID_USAGE);
  private static final Set<NcclResult> NOT_ERRORS = EnumSet.of(NcclResult.SUCCESS, NcclResult.IN_PROGRESS);

  @Test
  void everyCodeOfNcclHMapsToItsConstantAndName() {
    for (int code = 0; code < NCCL_H.size(); code++) {
      NcclResult r = NcclResult.of(code);
      assertEquals(code, r.code());
      assertEquals(NCCL_H.get(code), r.cName());
    }
    assertEquals(NCCL_H.size() + 1, NcclResult.values().length, "one constant per code, plus UNKNOWN");
    for (int code : new int[] {-1, 9, 42, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
      assertSame(NcclResult.UNKNOWN, NcclResult.of(code));
    }
  }

  @Test
  void everyErrorBecomesAnNcclExceptionNamingTheFunctionAndTheCode() {
    for (int code = 1; code < NCCL_H.size(); code++) {
      NcclResult r = NcclResult.of(code);
      NcclException e = new NcclException("ncclAllReduce", code, "text " + code, "last error " + code);
      assertTrue(e instanceof CommPlanException);
      assertSame(r, e.result());
      assertEquals(code, e.rawCode());
      assertEquals("ncclAllReduce", e.function());
      String message = e.getMessage();
      for (String part : List.of("ncclAllReduce failed", NCCL_H.get(code) + " (" + code + ")", "text " + code,
          "NCCL's last warning in this process (ncclGetLastError; it may be from an earlier failure): last error "
              + code, "NCCL_DEBUG=WARN")) {
        assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
      }
      assertEquals(r.isFatal(), e.isFatal());
    }
    NcclException unknown = new NcclException("ncclGroupEnd", 42, null, "");
    assertFalse(unknown.getMessage().contains("last warning"), "no last error, no hedge: " + unknown.getMessage());
    assertSame(NcclResult.UNKNOWN, unknown.result());
    assertEquals(42, unknown.rawCode());
    assertTrue(unknown.getMessage().contains("ncclGroupEnd failed: ncclResult_t (42)"), unknown.getMessage());
    assertTrue(unknown.isFatal(), "a code this version does not know is treated as fatal");
  }

  @Test
  void onlyInvalidArgumentAndInvalidUsageLeaveTheCommunicatorUsable() {
    for (NcclResult r : NcclResult.values()) {
      assertEquals(!NOT_ERRORS.contains(r), r.isError(), r.cName());
      assertEquals(r.isError() && !RECOVERABLE.contains(r), r.isFatal(), r.cName());
    }
    assertFalse(NcclResult.INVALID_ARGUMENT.isFatal());
    assertFalse(NcclResult.INVALID_USAGE.isFatal());
    for (NcclResult fatal : List.of(NcclResult.UNHANDLED_CUDA_ERROR, NcclResult.SYSTEM_ERROR, NcclResult.INTERNAL_ERROR,
        NcclResult.REMOTE_ERROR, NcclResult.TIMEOUT, NcclResult.UNKNOWN)) {
      assertTrue(fatal.isFatal(), fatal.cName());
    }
  }
}
