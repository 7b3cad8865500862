package dev.commplan.runtime.bootstrap;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.runtime.launch.Launcher;
import dev.commplan.runtime.launch.ProcessInfo;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.nccl.NcclBackend;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Without NCCL (CI): rank 0 cannot make the unique id, so it tells the others, which fail with its reason. */
class ProcessBootstrapTest {
  @Test
  void withoutNcclRankZeroTellsTheOthersWhy() {
    assumeTrue(NcclBackend.unavailableReason(1) != null, "NCCL is available here: this test is for machines without it");
    int port = Ports.free();
    List<Object> results = RendezvousTest.ranks(3, rank -> NcclBackend.processCommunicator(
        new ProcessInfo(rank, 3, rank, RendezvousTest.HOST, port, Launcher.EXPLICIT), RendezvousTest.FAST,
        CommOptions.defaults()));
    assertInstanceOf(BackendUnavailableException.class, results.get(0));
    for (Object r : results.subList(1, 3)) {
      RendezvousTest.assertMentions(RendezvousTest.messageOf(r), "rank 0 aborted: rank 0 could not make the NCCL unique id");
    }
  }
}
