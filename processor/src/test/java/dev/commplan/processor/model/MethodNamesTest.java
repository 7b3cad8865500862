package dev.commplan.processor.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class MethodNamesTest {
  @Test
  void accessorsKeepTheFieldNameUnlessItClashes() {
    assertEquals(List.of("w", "closeBuffer", "builderBuffer", "waitBuffer", "toStringBuffer"),
        MethodNames.accessors(List.of("w", "close", "builder", "wait", "toString"), "GradsPlan"));
  }

  @Test
  void aFieldThatAlreadyHasTheSuffixedNameKeepsIt() {
    assertEquals(List.of("closeBufferBuffer", "closeBuffer"), MethodNames.accessors(List.of("close", "closeBuffer"), "GradsPlan"));
  }

  @Test
  void bindMethodsAreCapitalizedAndUnique() {
    assertEquals(List.of("bindW", "bindWBuffer", "bindGrad", "bind$x", "bind_y"),
        MethodNames.bindMethods(List.of("w", "W", "grad", "$x", "_y")));
  }

  @Test
  void dimSettersAvoidBuilderMethodsAndBindMethods() {
    List<String> binds = MethodNames.bindMethods(List.of("w"));
    assertEquals(List.of("hidden", "waitDim", "buildDim", "bindWDim", "notifyAllDim"),
        MethodNames.dimSetters(List.of("hidden", "wait", "build", "bindW", "notifyAll"), binds));
  }

  @Test
  void namesAreComparedAsJavacReadsThem() {
    // javac drops identifier-ignorable characters: "wait\u200B" is wait, and "g\u200B" is g.
    assertEquals(List.of("waitBuffer", "g", "gBuffer"), MethodNames.accessors(List.of("wait\u200B", "g", "g\u200B"), "GradsPlan"));
    assertEquals(List.of("bindG", "bindGBuffer"), MethodNames.bindMethods(List.of("g", "g\u200B")));
    assertEquals(List.of("waitDim", "n", "nDim"),
        MethodNames.dimSetters(List.of("wait\u2060", "n", "n\u00AD"), List.of()));
  }

  @Test
  void noMethodHasItsClasssName() {
    assertEquals(List.of("GradsPlanBuffer", "w"), MethodNames.accessors(List.of("GradsPlan", "w"), "GradsPlan"));
    assertEquals(List.of("BuilderDim", "n"), MethodNames.dimSetters(List.of("Builder", "n"), List.of()));
  }

  @Test
  void everyPlanAndObjectMethodIsReserved() {
    for (String m : List.of("execute", "close", "describe", "schedule", "communicator", "builder", "toString",
        "hashCode", "equals", "getClass", "wait", "notify", "notifyAll", "clone", "finalize")) {
      assertEquals(List.of(m + "Buffer"), MethodNames.accessors(List.of(m), "GradsPlan"), m);
    }
  }

  /** A bucketed plan's own methods are reserved in it only: other plans keep the names they had. */
  @Test
  void aBucketedPlanReservesItsOwnMethods() {
    List<String> fields = List.of("ready", "finish", "buckets", "w");
    assertEquals(List.of("readyBuffer", "finishBuffer", "bucketsBuffer", "w"),
        MethodNames.accessors(fields, "GradsPlan", true));
    assertEquals(fields, MethodNames.accessors(fields, "GradsPlan", false));
    List<String> dims = List.of("commStream", "bucketBytes", "n");
    assertEquals(List.of("commStreamDim", "bucketBytesDim", "n"), MethodNames.dimSetters(dims, List.of(), true));
    assertEquals(dims, MethodNames.dimSetters(dims, List.of(), false));
  }

  @Test
  void fieldConstantsAreTheFieldNamesAsJavacReadsThem() {
    assertEquals(List.of("w", "ready", "Field", "values", "$VALUES", "g", "g_"),
        MethodNames.fieldConstants(List.of("w", "ready", "Field", "values", "$VALUES", "g", "g\u200B")));
  }
}
