package dev.commplan.processor;

import java.util.ArrayList;
import java.util.List;

/**
 * Plans of any number of buffer fields, for the scale test and {@link ScaleMeasure}: every collective, in
 * place and out of place, four data types, several steps, shapes with dims, ranks and literals.
 */
final class LargePlans {
  private LargePlans() {}

  /**
   * The body of {@code @CommPlan class <name>} with {@code fields} buffer fields (a multiple of 4), in
   * groups of four: {@code a<k>} all-reduced in place ({@code @Shape({"n", "<1 + k % 8>"})}, step k % 3),
   * {@code b<k>} all-gathered into {@code c<k>} (step 3), {@code d<k>} broadcast from rank 0 (step 4).
   */
  static List<String> plan(String name, int fields) {
    return plan(name, fields, "");
  }

  /**
   * {@link #plan(String, int)} with more {@code @CommPlan} attributes, such as {@code ", bucketBytes = 64"}
   * (three fields of four are sent: {@code a}, {@code b} and {@code d}).
   */
  static List<String> plan(String name, int fields, String moreAttributes) {
    if (fields % 4 != 0) {
      throw new IllegalArgumentException("fields must be a multiple of 4: " + fields);
    }
    List<String> body = new ArrayList<>();
    body.add("@CommPlan(dims = {\"n\", \"m\"}" + moreAttributes + ")");
    body.add("class " + name + " {");
    for (int k = 0; k < fields / 4; k++) {
      body.add("  @AllReduce(step = " + (k % 3) + ") @Shape({\"n\", \"" + (1 + k % 8) + "\"}) F32Buffer a" + k + ";");
      body.add("  @AllGather(into = \"c" + k + "\", step = 3) @Shape(\"m\") I32Buffer b" + k + ";");
      body.add("  @Shape({\"ranks\", \"m\"}) I32Buffer c" + k + ";");
      body.add("  @Broadcast(step = 4) @Shape(\"2\") F64Buffer d" + k + ";");
    }
    body.add("}");
    return body;
  }
}
