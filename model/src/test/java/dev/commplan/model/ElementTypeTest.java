package dev.commplan.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ElementTypeTest {
  @Test
  void namesOfTheBufferClassAndTheNcclType() {
    assertEquals("F32Buffer", ElementType.F32.bufferSimpleName());
    assertEquals("dev.commplan.runtime.F8E4M3Buffer", ElementType.F8E4M3.bufferClassName());
    assertEquals("ncclBfloat16", ElementType.BF16.ncclType());
    assertEquals("ncclUint64", ElementType.U64.ncclType());
    for (ElementType t : ElementType.values()) {
      assertSame(t, ElementType.forBufferClassName(t.bufferClassName()));
    }
    assertNull(ElementType.forBufferClassName("F32Buffer"));
    assertNull(ElementType.forBufferClassName("dev.commplan.runtime.Buffer"));
  }

  @Test
  void sizesAndKinds() {
    assertEquals(2, ElementType.BF16.byteSize());
    assertEquals(8, ElementType.I64.byteSize());
    assertEquals(1, ElementType.F8E5M2.byteSize());
    assertEquals(EnumSet.of(ElementType.F8E4M3, ElementType.F8E5M2), select(ElementType::isFloat8));
    assertEquals(EnumSet.of(ElementType.U8, ElementType.U32, ElementType.U64), select(ElementType::isUnsigned));
    assertEquals(EnumSet.of(ElementType.F16, ElementType.BF16, ElementType.F32, ElementType.F64, ElementType.F8E4M3,
        ElementType.F8E5M2), select(ElementType::isFloatingPoint));
    assertFalse(ElementType.I8.isFloat8());
  }

  @Test
  void averageIsRefusedOnFp8Only() {
    for (ElementType t : ElementType.values()) {
      assertEquals(t.isFloat8(), Fp8AverageRule.refuses(Collective.ALL_REDUCE, "AVG", t), t.name());
      assertFalse(Fp8AverageRule.refuses(Collective.ALL_REDUCE, "SUM", t), t.name());
    }
    assertTrue(Fp8AverageRule.refuses(Collective.REDUCE_SCATTER, "AVG", ElementType.F8E5M2));
    // A collective without an op ignores it.
    assertFalse(Fp8AverageRule.refuses(Collective.ALL_GATHER, "AVG", ElementType.F8E4M3));
  }

  private static Set<ElementType> select(java.util.function.Predicate<ElementType> p) {
    EnumSet<ElementType> out = EnumSet.noneOf(ElementType.class);
    for (ElementType t : ElementType.values()) {
      if (p.test(t)) {
        out.add(t);
      }
    }
    return out;
  }
}
