package dev.commplan.runtime.plan;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.Stream;
import java.util.Objects;

/** A bucketed plan's rules ({@link PlanBuilder#bucketBytes}, {@link PlanBuilder#commStream}). */
final class Buckets {
  private Buckets() {}

  /** {@code bytes}, checked: 0 (not bucketed) or more. */
  static long checkBytes(String planName, long bytes) {
    if (bytes < 0) {
      throw new PlanBuildException("[CommPlan/BadBucket] plan " + planName + ": bucketBytes = " + bytes
          + " is negative; give the most bytes of gradients per bucket (say 25 MiB = 26214400), or 0 for no buckets");
    }
    return bytes;
  }

  /** {@code stream}, checked to be a stream of {@code comm}, the plan's communicator. */
  static Stream checkStream(String planName, Communicator comm, Stream stream) {
    Objects.requireNonNull(stream, "stream");
    if (stream.communicator() != comm) {
      throw new IllegalArgumentException("plan " + planName + ": commStream(" + stream + ") belongs to "
          + stream.communicator() + ", not to the plan's communicator " + comm + " (of a plan over a mesh: the"
          + " mesh's world); make it with newStream() of that communicator");
    }
    return stream;
  }
}
