package dev.commplan.runtime.nccl;

/**
 * An NCCL version, decoded from {@code ncclGetVersion}'s code as {@code nccl.h}'s {@code NCCL_VERSION}
 * macro encodes it: {@code major*10000 + minor*100 + patch} from 2.9 on, {@code major*1000 + minor*100 +
 * patch} before (2.8.4 is 2804; 2.28.3 is 22803).
 *
 * @param major the major version: 2 for every NCCL so far
 * @param minor the minor version: 28 for 2.28.3
 * @param patch the patch level: 3 for 2.28.3
 */
public record NcclVersion(int major, int minor, int patch) implements Comparable<NcclVersion> {
  /**
   * The first NCCL with {@code ncclAvg} and {@code ncclBfloat16}: the NCCL 2.10.3 release notes ("Added
   * ncclAvg operation", "Added support for bfloat16 type";
   * docs.nvidia.com/deeplearning/nccl/release-notes/rel_2-10-3.html).
   */
  public static final NcclVersion AVG_AND_BF16 = new NcclVersion(2, 10, 3);

  /**
   * The first NCCL with {@code ncclFloat8e4m3} and {@code ncclFloat8e5m2}: NVIDIA/nccl's {@code
   * src/nccl.h.in} gains them in the "2.24.3-1" release commit (the first 2.24). Reductions on them also
   * need sm_90 devices (NCCL's {@code enqueue.cc}: "FP8 reduction support begins with sm90 capable
   * devices"); moving them (Broadcast, AllGather, Gather, Scatter, AllToAll, Send, Recv) does not.
   */
  public static final NcclVersion FP8 = new NcclVersion(2, 24, 3);

  /**
   * The first NCCL with {@code ncclGather}, {@code ncclScatter} and {@code ncclAlltoAll} (the "NCCL
   * 2.28.3-1" commit of NVIDIA/nccl adds them to {@code nccl.h}). CommPlan looks them up by symbol, not by
   * version: this is for messages and docs.
   */
  public static final NcclVersion GATHER_SCATTER_ALLTOALL = new NcclVersion(2, 28, 3);

  /**
   * The first NCCL with {@code ncclCommSplit} (the "2.18.1-1" release of NVIDIA/nccl adds it to {@code
   * nccl.h}), which {@code Communicator.split} and meshes need. Looked up by symbol; this is for messages.
   */
  public static final NcclVersion COMM_SPLIT = new NcclVersion(2, 18, 1);

  /**
   * The first NCCL that runs several ranks of a communicator on one GPU, when {@code
   * NCCL_MULTI_RANK_GPU_ENABLE=1} (experimental): the v2.30.3-1 tag of NVIDIA/nccl is the first whose {@code
   * src/init.cc} reads the variable ({@code docs/userguide/source/env.rst}: "since 2.30"); older ones refuse
   * ("Duplicate GPU detected").
   */
  public static final NcclVersion MULTI_RANK_GPU = new NcclVersion(2, 30, 3);

  /**
   * Decodes {@code ncclGetVersion}'s code.
   *
   * @param code the code, as {@code ncclGetVersion} returns it
   * @return the version
   * @throws IllegalArgumentException if {@code code} is negative
   */
  public static NcclVersion decode(int code) {
    if (code < 0) {
      throw new IllegalArgumentException("not an NCCL version code: " + code);
    }
    if (code < 10000) { // the old encoding: X*1000 + Y*100 + Z, used up to 2.8
      return new NcclVersion(code / 1000, (code % 1000) / 100, code % 100);
    }
    return new NcclVersion(code / 10000, (code % 10000) / 100, code % 100);
  }

  /** {@return the code {@code NCCL_VERSION(major, minor, patch)} gives} */
  public int code() {
    return major <= 2 && minor <= 8 ? major * 1000 + minor * 100 + patch : major * 10000 + minor * 100 + patch;
  }

  /**
   * Whether this is {@code other} or newer.
   *
   * @param other the version to compare with
   * @return true if this is {@code other} or newer
   */
  public boolean atLeast(NcclVersion other) {
    return compareTo(other) >= 0;
  }

  @Override
  public int compareTo(NcclVersion o) {
    int c = Integer.compare(major, o.major);
    if (c == 0) {
      c = Integer.compare(minor, o.minor);
    }
    return c != 0 ? c : Integer.compare(patch, o.patch);
  }

  @Override
  public String toString() {
    return major + "." + minor + "." + patch;
  }
}
