package dev.commplan.processor.model;

/** The four collective annotations, with what the processor needs to know about each. */
public enum CollectiveKind {
  ALL_REDUCE("AllReduce", "allReduce", "reduces into", true, false),
  BROADCAST("Broadcast", "broadcast", "broadcasts into", false, true),
  ALL_GATHER("AllGather", "allGather", "gathers into", false, false),
  REDUCE_SCATTER("ReduceScatter", "reduceScatter", "scatters into", true, false);

  private final String annotation;
  private final String builderMethod;
  private final String intoVerb;
  private final boolean hasOp;
  private final boolean hasRoot;

  CollectiveKind(String annotation, String builderMethod, String intoVerb, boolean hasOp, boolean hasRoot) {
    this.annotation = annotation;
    this.builderMethod = builderMethod;
    this.intoVerb = intoVerb;
    this.hasOp = hasOp;
    this.hasRoot = hasRoot;
  }

  /** The annotation's simple name, such as {@code AllGather}. */
  public String annotation() {
    return annotation;
  }

  /** The annotation's qualified name. */
  public String annotationName() {
    return "dev.commplan.annotations." + annotation;
  }

  /** The {@code PlanBuilder} method that declares it, such as {@code allGather}. */
  public String builderMethod() {
    return builderMethod;
  }

  /** How messages say "send ... into recv", such as {@code gathers into}. */
  public String intoVerb() {
    return intoVerb;
  }

  /** Whether it has {@code op()} (AllReduce, ReduceScatter). */
  public boolean hasOp() {
    return hasOp;
  }

  /** Whether it has {@code root()} (Broadcast). */
  public boolean hasRoot() {
    return hasRoot;
  }

  /** The kind whose annotation has this qualified name, or null. */
  public static CollectiveKind forAnnotation(String qualifiedName) {
    for (CollectiveKind k : values()) {
      if (k.annotationName().equals(qualifiedName)) {
        return k;
      }
    }
    return null;
  }
}
