package dev.commplan.runtime.nccl.binding;

/**
 * The message for a JVM that has not enabled native access for CommPlan's runtime: which flag to add,
 * for the module the runtime is in (as Lucene's {@code PosixNativeAccess} does).
 */
public final class NativeAccessMessage {
  private NativeAccessMessage() {}

  /** The {@code --enable-native-access} flag that enables {@code module}. */
  public static String flag(Module module) {
    return "--enable-native-access=" + (module.isNamed() ? module.getName() : "ALL-UNNAMED");
  }

  /** What to tell a user whose JVM has native access disabled for {@code module}. */
  public static String forModule(Module module) {
    String where = module.isNamed()
        ? "module " + module.getName()
        : "the class path (CommPlan's runtime is in the unnamed module)";
    StringBuilder sb = new StringBuilder()
        .append("The NCCL backend calls NCCL and the CUDA runtime through java.lang.foreign, and native access")
        .append(" is not enabled for ").append(where).append(". Start java with ").append(flag(module));
    if (!module.isNamed()) {
      sb.append(" (for an executable jar, the manifest attribute 'Enable-Native-Access: ALL-UNNAMED' does it;")
          .append(" under Maven Surefire, add the flag to argLine)");
    }
    return sb.append('.').toString();
  }
}
