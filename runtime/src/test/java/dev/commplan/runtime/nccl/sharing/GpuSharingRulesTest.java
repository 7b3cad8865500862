package dev.commplan.runtime.nccl.sharing;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.nccl.memory.DeviceAllocator;
import dev.commplan.runtime.nccl.NcclBackend;
import dev.commplan.runtime.nccl.NcclException;
import dev.commplan.runtime.nccl.NcclVersion;
import dev.commplan.runtime.nccl.sharing.GpuSharingRules.Decision;
import dev.commplan.runtime.nccl.sharing.GpuSharingRules.OptIn;
import dev.commplan.runtime.nccl.binding.raw.NcclConfig;
import dev.commplan.runtime.nccl.binding.raw.ProcessEnvironment;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What needs no GPU of several ranks on one GPU ({@link GpuSharingRules}): the CTA rule and its override,
 * the refusals and their messages with fake NCCL versions and opt-ins, the decision's opt-in and limit,
 * {@code ncclConfig_t}'s bytes against {@code nccl.h}'s layout, which ranks share a GPU, and the process
 * environment as libc sees it. Nothing here changes NCCL's variables in this JVM.
 */
class GpuSharingRulesTest {
  private static final NcclVersion OLD = new NcclVersion(2, 28, 3);
  private static final NcclVersion NEW = new NcclVersion(2, 30, 7);
  private static final String WHERE = "an NCCL cluster of 8 ranks on 1 CUDA device";
  private static final String FEWER = "ask for at most 1 rank here (one per GPU)";
  private static final OptIn NOTHING = new OptIn(null, null, false, null);
  private static final OptIn PROPERTY = new OptIn(null, "true", false, null);

  @Test
  void theCtaRuleLimitsMoreTheMoreRanksShareAGpu() {
    int[][] expected = {{1, 0}, {2, 0}, {3, 4}, {4, 4}, {5, 2}, {8, 2}, {9, 1}, {64, 1}};
    for (int[] e : expected) {
      assertEquals(e[1], GpuSharingRules.ctaRule(e[0]), e[0] + " ranks a GPU");
    }
  }

  @Test
  void thePropertyOverridesTheRuleAndABadValueIsRefusedNamingIt() {
    assertEquals(2, GpuSharingRules.ctaLimit(8, null));
    assertEquals(2, GpuSharingRules.ctaLimit(8, " "));
    assertEquals(3, GpuSharingRules.ctaLimit(8, "3"));
    assertEquals(0, GpuSharingRules.ctaLimit(4, "none"));
    assertEquals(0, GpuSharingRules.ctaLimit(4, "0"));
    for (String bad : List.of("-1", "two", "2.5")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuSharingRules.ctaLimit(4, bad));
      assertMentions(e.getMessage(), NcclBackend.MAX_CTAS_PROPERTY, "'" + bad + "'", "none");
    }
  }

  @Test
  void oneRankPerGpuNeedsNothing() {
    for (OptIn optIn : List.of(NOTHING, new OptIn("0", "false", true, null))) {
      assertNull(GpuSharingRules.refusal(1, WHERE, FEWER, OLD, optIn));
      Decision d = GpuSharingRules.decide(1, WHERE, FEWER, OLD, optIn, "3", "4");
      assertEquals(GpuSharing.ONE_RANK_PER_GPU, d.sharing());
      assertFalse(d.setVariable());
      assertEquals("", d.sharing().describe());
    }
  }

  @Test
  void anOlderNcclIsRefusedNamingTheVariableTheOptionAndBothVersions() {
    for (OptIn optIn : List.of(NOTHING, PROPERTY, new OptIn("1", null, false, null))) {
      String m = GpuSharingRules.refusal(2, WHERE, FEWER, OLD, optIn);
      assertMentions(m, WHERE + " puts 2 ranks on one GPU", "from 2.30.3 on", "NCCL_MULTI_RANK_GPU_ENABLE=1",
          "loaded NCCL 2.28.3", "Duplicate GPU detected", "-Dcommplan.nccl.library=", "-Dcommplan.nccl.multiRankGpu=true",
          FEWER);
      BackendUnavailableException e = assertThrows(BackendUnavailableException.class,
          () -> GpuSharingRules.decide(2, WHERE, FEWER, OLD, optIn, null, null));
      assertEquals(m, e.getMessage());
    }
    assertEquals(new NcclVersion(2, 30, 3), NcclVersion.MULTI_RANK_GPU);
  }

  @Test
  void withoutTheOptInItIsRefusedSayingHowToOptIn() {
    String m = GpuSharingRules.refusal(4, WHERE, FEWER, NEW, NOTHING);
    assertMentions(m, WHERE + " puts 4 ranks on one GPU", "NCCL 2.30.7 runs only when NCCL_MULTI_RANK_GPU_ENABLE is set",
        "experimental", "it is not set", "-Dcommplan.nccl.multiRankGpu=true", "export NCCL_MULTI_RANK_GPU_ENABLE=1",
        FEWER);
    assertEquals(m, GpuSharingRules.refusal(4, WHERE, FEWER, NEW, new OptIn(null, "false", false, null)));
  }

  @Test
  void aZeroTheUserSetIsNeverOverwritten() {
    String m = GpuSharingRules.refusal(2, WHERE, FEWER, NEW, new OptIn("0", "true", false, null));
    assertMentions(m, "NCCL_MULTI_RANK_GPU_ENABLE=0 in this process's environment forbids it", "never overwrites",
        "unset it or set it to 1");
    assertTrue(GpuSharingRules.refusal(2, WHERE, FEWER, NEW, new OptIn("yes", "true", false, null))
        .contains("NCCL_MULTI_RANK_GPU_ENABLE=yes"), "NCCL reads a value that is no number as 0");
  }

  @Test
  void thePropertySetsTheVariableAtTheProcesssFirstCommunicatorWhateverItsSize() {
    // A one-rank cluster made first used to leave the variable unset when NCCL read it, so every later
    // cluster of ranks sharing the GPU was refused (the GPU tests at 2 ranks, 2026-12-06)
    assertTrue(GpuSharingRules.setAtFirstInit(new OptIn(null, "true", false, null)));
    assertFalse(GpuSharingRules.setAtFirstInit(new OptIn(null, "true", true, null)), "NCCL read it already");
    assertFalse(GpuSharingRules.setAtFirstInit(new OptIn("0", "true", false, null)), "the user's value is kept");
    assertFalse(GpuSharingRules.setAtFirstInit(new OptIn(null, null, false, null)), "no opt-in");
    assertFalse(GpuSharingRules.setAtFirstInit(new OptIn(null, "false", false, null)), "no opt-in");
  }

  @Test
  void afterNcclReadTheVariableUnsetTheOptInComesTooLateAndSaysSo() {
    String m = GpuSharingRules.refusal(2, WHERE, FEWER, NEW, new OptIn(null, "true", true, null));
    assertMentions(m, "NCCL_MULTI_RANK_GPU_ENABLE is not set, and NCCL read it when this process made its first"
        + " communicator, when it was unset", "keeps that first value", "on the java command line", FEWER);
    String setLater = GpuSharingRules.refusal(2, WHERE, FEWER, NEW, new OptIn("1", null, true, null));
    assertMentions(setLater, "is set now, but NCCL read it", "when it was unset");
    assertNull(GpuSharingRules.refusal(2, WHERE, FEWER, NEW, new OptIn(null, "true", true, "1")),
        "NCCL read it on: it stays on");
  }

  @Test
  void thePropertyAloneSetsTheVariableBeforeNcclReadsItAndChoosesTheLimit() {
    Decision d = GpuSharingRules.decide(8, WHERE, FEWER, NEW, PROPERTY, null, null);
    assertTrue(d.setVariable());
    assertEquals(8, d.sharing().ranksPerGpu());
    assertEquals(2, d.sharing().maxCtas());
    assertEquals(", 8 ranks share each GPU, at most 2 CTAs a rank (ncclConfig_t.maxCTAs, the rule for 5-8 ranks a"
        + " GPU); NCCL_MULTI_RANK_GPU_ENABLE=1 set by -Dcommplan.nccl.multiRankGpu=true", d.sharing().describe());
  }

  @Test
  void aVariableThisProcessSetIsSaidToBeOurs() {
    Decision again = GpuSharingRules.decide(4, WHERE, FEWER, NEW, new OptIn("1", "true", true, "1", true), null, null);
    assertFalse(again.setVariable());
    assertMentions(again.sharing().describe(), "NCCL_MULTI_RANK_GPU_ENABLE=1 set by -Dcommplan.nccl.multiRankGpu=true");
  }

  @Test
  void aVariableAlreadySetIsUsedAsItIsAndTheUsersNcclMaxCtasWins() {
    Decision d = GpuSharingRules.decide(4, WHERE, FEWER, NEW, new OptIn("1", null, false, null), null, "3");
    assertFalse(d.setVariable());
    assertEquals(4, d.sharing().maxCtas(), "ours is still passed; NCCL puts the environment's over it");
    assertMentions(d.sharing().describe(), "4 ranks share each GPU", "at most 3 CTAs a rank (NCCL_MAX_CTAS=3 from the"
        + " environment, which NCCL puts over CommPlan's at most 4 CTAs a rank", "NCCL_MULTI_RANK_GPU_ENABLE=1 from the"
        + " environment");
    Decision two = GpuSharingRules.decide(2, WHERE, FEWER, NEW, new OptIn("1", null, true, "1"), null, null);
    assertEquals(0, two.sharing().maxCtas());
    assertMentions(two.sharing().describe(), "2 ranks share each GPU, no CTA limit (the rule for 1-2 ranks a GPU)");
    Decision overridden = GpuSharingRules.decide(2, WHERE, FEWER, NEW, PROPERTY, "1", null);
    assertEquals(1, overridden.sharing().maxCtas());
    assertMentions(overridden.sharing().describe(), "at most 1 CTAs a rank (ncclConfig_t.maxCTAs, -Dcommplan.nccl.maxCtas=1)");
  }

  @Test
  void initRankDoesNotKnowTheSharingAppliesTheOptInAndRefusesNothing() {
    Decision none = GpuSharingRules.decide(0, WHERE, FEWER, OLD, NOTHING, null, null);
    assertEquals(GpuSharing.ONE_RANK_PER_GPU, none.sharing());
    assertFalse(none.setVariable());
    Decision on = GpuSharingRules.decide(0, WHERE, FEWER, NEW, PROPERTY, null, null);
    assertTrue(on.setVariable());
    assertEquals(0, on.sharing().maxCtas());
    assertMentions(on.sharing().describe(), "ranks per GPU unknown", "no CTA limit (ranks per GPU unknown");
    assertFalse(GpuSharingRules.decide(0, WHERE, FEWER, NEW, new OptIn("0", "true", false, null), null, null)
        .setVariable(), "a 0 the user set stays");
  }

  @Test
  void onlyTrueOrFalseIsAnAnswerForTheOptInProperty() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> GpuSharingRules.refusal(2, WHERE, FEWER, NEW, new OptIn(null, "yes", false, null)));
    assertMentions(e.getMessage(), NcclBackend.MULTI_RANK_GPU_PROPERTY, "'yes'", "true or false");
    assertTrue(OptIn.enabled("1") && OptIn.enabled(" 2 ") && OptIn.enabled("0x1"));
    assertFalse(OptIn.enabled("0") || OptIn.enabled("") || OptIn.enabled("on") || OptIn.enabled(null));
  }

  @Test
  void nccsOwnRefusalOfASharedGpuGetsAHint() {
    NcclException refused = new NcclException("ncclCommInitRank", 5, "invalid usage",
        "Multiple Ranks are using the same GPU/Partition. Set NCCL_MULTI_RANK_GPU_ENABLE=1 to enable this");
    GpuSharingRules.explainInitFailure(refused, NEW);
    assertEquals(1, refused.getSuppressed().length);
    assertMentions(refused.getSuppressed()[0].getMessage(), "NCCL 2.30.7 refused ranks that share a GPU",
        "-Dcommplan.nccl.multiRankGpu=true", "before the process's first NCCL communicator");
    NcclException old = new NcclException("ncclCommInitRank", 5, "invalid usage", "Duplicate GPU detected : rank 1");
    GpuSharingRules.explainInitFailure(old, OLD);
    assertMentions(old.getSuppressed()[0].getMessage(), "needs NCCL 2.30.3 or newer");
    NcclException other = new NcclException("ncclCommInitRank", 2, "system error", "socket");
    assertEquals(0, GpuSharingRules.explainInitFailure(other, NEW).getSuppressed().length);
  }

  @Test
  void ranksShareAGpuOnlyWhenHostAndPciAddressAreTheSame() {
    assertEquals(1, GpuSharingRules.ranksPerGpu(List.of("boot-a/0000:3b:00.0", "boot-a/0000:5c:00.0")));
    assertEquals(1, GpuSharingRules.ranksPerGpu(List.of("boot-a/0000:3b:00.0", "boot-b/0000:3b:00.0")),
        "two hosts, each its own GPU at the same address");
    assertEquals(3, GpuSharingRules.ranksPerGpu(List.of("h/0000:3b:00.0", "h/0000:3b:00.0", "h/0000:5c:00.0",
        "h/0000:3b:00.0")));
  }

  /**
   * The bytes of the config against {@code struct ncclConfig_v21700} of NCCL's {@code nccl.h.in} (v2.17.1-1),
   * little-endian: size_t size = 40; unsigned magic = 0xcafebeef; unsigned version = 21700; int blocking,
   * cgaClusterSize, minCTAs = INT_MIN (NCCL_CONFIG_UNDEF_INT); int maxCTAs; const char* netName = NULL.
   */
  @Test
  void theConfigsBytesAreNcclsLayout() {
    assertEquals(40, NcclConfig.LAYOUT.byteSize());
    String[] fields = {"size", "magic", "version", "blocking", "cgaClusterSize", "minCTAs", "maxCTAs", "netName"};
    long[] offsets = {0, 8, 12, 16, 20, 24, 28, 32};
    for (int i = 0; i < fields.length; i++) {
      assertEquals(offsets[i], NcclConfig.LAYOUT.byteOffset(MemoryLayout.PathElement.groupElement(fields[i])), fields[i]);
    }
    ByteBuffer want = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN);
    want.putLong(40).putInt(0xcafebeef).putInt(21700).putInt(Integer.MIN_VALUE).putInt(Integer.MIN_VALUE)
        .putInt(Integer.MIN_VALUE).putInt(4).putLong(0);
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment config = NcclConfig.withMaxCtas(arena, 4);
      assertArrayEquals(want.array(), config.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
      assertEquals(40L, config.get(JAVA_LONG, 0));
      assertEquals(4, config.get(JAVA_INT, 28));
      assertEquals(0L, config.get(ADDRESS, 32).address());
      assertEquals(NcclConfig.UNDEF_INT,
          NcclConfig.withMaxCtas(arena, NcclConfig.UNDEF_INT).get(JAVA_INT, 28), "undefined: NCCL's default");
      assertThrows(IllegalArgumentException.class, () -> NcclConfig.withMaxCtas(arena, 0));
    }
  }

  /** libc's environment, which NCCL reads: what is set there is read back. */
  @Test
  void theProcessEnvironmentIsLibcs() {
    String name = "COMMPLAN_TEST_" + ProcessHandle.current().pid() + "_" + System.nanoTime();
    assertNull(ProcessEnvironment.get(name));
    ProcessEnvironment.set(name, "1");
    assertEquals("1", ProcessEnvironment.get(name));
    ProcessEnvironment.set(name, "2");
    assertEquals("2", ProcessEnvironment.get(name));
    assertThrows(IllegalStateException.class, () -> ProcessEnvironment.set("A=B", "1"), "no '=' in a name");
  }

  private static void assertMentions(String text, String... parts) {
    for (String part : parts) {
      assertTrue(text != null && text.contains(part), () -> "'" + part + "' missing from: " + text);
    }
  }

  @Test
  void memoryIsStreamOrderedWhereRanksOfThisProcessShareAGpuUnlessThePropertySaysOtherwise() {
    GpuSharing processes = GpuSharingRules.decide(4, WHERE, FEWER, NEW, PROPERTY, null, null).sharing();
    GpuSharing threads = processes.inOneContext();
    assertFalse(processes.oneContext(), "ranks of separate processes have contexts of their own");
    assertTrue(threads.oneContext());
    assertEquals(GpuSharing.ONE_RANK_PER_GPU, GpuSharing.ONE_RANK_PER_GPU.inOneContext());
    assertMentions(threads.describe(), "4 ranks share each GPU in this process");
    for (String auto : new String[] {null, "", " auto "}) {
      assertTrue(DeviceAllocator.streamOrdered(threads, auto));
      assertFalse(DeviceAllocator.streamOrdered(processes, auto));
      assertFalse(DeviceAllocator.streamOrdered(GpuSharing.ONE_RANK_PER_GPU, auto));
    }
    assertTrue(DeviceAllocator.streamOrdered(GpuSharing.ONE_RANK_PER_GPU, "true"));
    assertFalse(DeviceAllocator.streamOrdered(threads, "FALSE"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> DeviceAllocator.streamOrdered(threads, "yes"));
    assertMentions(e.getMessage(), DeviceAllocator.PROPERTY, "'yes'", "auto", "true or false");
  }
}
