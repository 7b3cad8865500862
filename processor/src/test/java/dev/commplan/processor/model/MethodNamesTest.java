package dev.commplan.processor.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class MethodNamesTest {
  @Test
  void accessorsKeepTheFieldNameUnlessItClashes() {
    assertEquals(List.of("w", "closeBuffer", "builderBuffer", "waitBuffer", "toStringBuffer"),
        MethodNames.accessors(List.of("w", "close", "builder", "wait", "toString")));
  }

  @Test
  void aFieldThatAlreadyHasTheSuffixedNameKeepsIt() {
    assertEquals(List.of("closeBufferBuffer", "closeBuffer"), MethodNames.accessors(List.of("close", "closeBuffer")));
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
  void everyPlanAndObjectMethodIsReserved() {
    for (String m : List.of("execute", "close", "describe", "schedule", "communicator", "builder", "toString",
        "hashCode", "equals", "getClass", "wait", "notify", "notifyAll", "clone", "finalize")) {
      assertEquals(List.of(m + "Buffer"), MethodNames.accessors(List.of(m)), m);
    }
  }
}
