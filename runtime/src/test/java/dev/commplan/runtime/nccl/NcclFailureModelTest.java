package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The parts of the NCCL failure model that need no GPU: which codes abort, the options overloads. */
class NcclFailureModelTest {
  @Test
  void onlyRefusedCallsLeaveTheCommunicatorUsable() {
    assertFalse(NcclRankState.isFatal(NcclResult.SUCCESS.code()));
    assertFalse(NcclRankState.isFatal(NcclResult.INVALID_ARGUMENT.code()));
    assertFalse(NcclRankState.isFatal(NcclResult.INVALID_USAGE.code()));
    assertFalse(NcclRankState.isFatal(NcclResult.IN_PROGRESS.code()));
    for (NcclResult fatal : new NcclResult[] {NcclResult.UNHANDLED_CUDA_ERROR, NcclResult.SYSTEM_ERROR,
        NcclResult.INTERNAL_ERROR, NcclResult.REMOTE_ERROR, NcclResult.TIMEOUT}) {
      assertTrue(NcclRankState.isFatal(fatal.code()), fatal.cName());
    }
    assertTrue(NcclRankState.isFatal(1234), "an unknown code is treated as fatal");
  }

  @Test
  void theOptionsOverloadsStillSayWhatIsMissing() {
    if (NcclBackend.unavailableReason(1) == null) {
      return; // a GPU machine: NcclFailureGpuTest covers these
    }
    CommOptions options = CommOptions.timeout(Duration.ofSeconds(3));
    assertThrows(BackendUnavailableException.class, () -> NcclBackend.cluster(1, options));
    assertThrows(BackendUnavailableException.class,
        () -> NcclBackend.initRank(0, 1, new byte[128], 0, options));
    assertThrows(NullPointerException.class, () -> NcclBackend.cluster(1, null));
  }
}
