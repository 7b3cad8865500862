package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.parse.ParsedPlan;

/** Rule 23: {@code @CommPlan(bucketBytes)}. */
final class BucketRules {
  /**
   * The most fields a bucketed plan may send: its generated {@code enum Field} has a constant for each, and
   * an enum's static initializer grows with its constants, within the JVM's 64 KB per method. Eclipse's
   * compiler passes that limit at 2,742 constants, javac at 4,104 (JDK 25); this leaves a margin below
   * both.
   */
  static final int MAX_SENT_FIELDS = 2_700;

  private final PlanContext cx;

  BucketRules(PlanContext cx) {
    this.cx = cx;
  }

  /**
   * Whether a negative {@code bucketBytes} is most likely an int expression that overflowed ({@code 1 << 31},
   * {@code 3 * 1024 * 1024 * 1024}): an int value, and a large one (a typed {@code -1} is not).
   */
  static boolean looksOverflowed(long bytes) {
    return bytes >= Integer.MIN_VALUE && bytes < -(1L << 16);
  }

  /** Reports a negative {@code bucketBytes}, and a bucketed plan of more sent fields than its enum can hold. */
  void checkBucketBytes() {
    ParsedPlan plan = cx.plan;
    long bytes = plan.bucketBytes().value();
    if (bytes < 0 && looksOverflowed(bytes)) {
      cx.report.add(Message.OVERFLOWED_BUCKET, plan.element(), plan.mirror(), plan.bucketBytes().source(), bytes,
          Integer.MIN_VALUE);
    } else if (bytes < 0) {
      cx.report.add(Message.NEGATIVE_BUCKET, plan.element(), plan.mirror(), plan.bucketBytes().source(), bytes);
    } else if (bytes > 0 && plan.sentFields().size() > MAX_SENT_FIELDS) {
      cx.report.add(Message.TOO_MANY_BUCKET_FIELDS, plan.element(), plan.mirror(), plan.bucketBytes().source(),
          bytes, plan.simpleName(), plan.sentFields().size(), MAX_SENT_FIELDS, MAX_SENT_FIELDS);
    }
  }
}
