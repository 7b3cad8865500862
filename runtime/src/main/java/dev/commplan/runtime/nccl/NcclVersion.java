package dev.commplan.runtime.nccl;

/**
 * An NCCL version, decoded from {@code ncclGetVersion}'s code as {@code nccl.h}'s {@code NCCL_VERSION}
 * macro encodes it: {@code major*10000 + minor*100 + patch} from 2.9 on, {@code major*1000 + minor*100 +
 * patch} before (2.8.4 is 2804; 2.28.3 is 22803).
 */
public record NcclVersion(int major, int minor, int patch) implements Comparable<NcclVersion> {
  /**
   * The first NCCL with {@code ncclAvg} and {@code ncclBfloat16}: the NCCL 2.10.3 release notes ("Added
   * ncclAvg operation", "Added support for bfloat16 type";
   * docs.nvidia.com/deeplearning/nccl/release-notes/rel_2-10-3.html).
   */
  public static final NcclVersion AVG_AND_BF16 = new NcclVersion(2, 10, 3);

  /** Decodes {@code ncclGetVersion}'s code. */
  public static NcclVersion decode(int code) {
    if (code < 0) {
      throw new IllegalArgumentException("not an NCCL version code: " + code);
    }
    if (code < 10000) { // the old encoding: X*1000 + Y*100 + Z, used up to 2.8
      return new NcclVersion(code / 1000, (code % 1000) / 100, code % 100);
    }
    return new NcclVersion(code / 10000, (code % 10000) / 100, code % 100);
  }

  /** The code {@code NCCL_VERSION(major, minor, patch)} gives. */
  public int code() {
    return major <= 2 && minor <= 8 ? major * 1000 + minor * 100 + patch : major * 10000 + minor * 100 + patch;
  }

  /** Whether this is {@code other} or newer. */
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
