package dev.commplan.runtime.plan;

/** The four collectives a plan can issue. */
public enum Collective {
  ALL_REDUCE("all-reduce"),
  BROADCAST("broadcast"),
  ALL_GATHER("all-gather"),
  REDUCE_SCATTER("reduce-scatter");

  private final String label;

  Collective(String label) {
    this.label = label;
  }

  /** Lower-case, hyphenated name: {@code all-reduce}, {@code broadcast}, ... */
  public String label() {
    return label;
  }
}
