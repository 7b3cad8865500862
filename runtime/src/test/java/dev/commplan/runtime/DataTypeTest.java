package dev.commplan.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.model.ElementType;
import dev.commplan.runtime.local.LocalCluster;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * {@link DataType} and the model's {@link ElementType}, which the processor reads, hold one list: the same
 * names in the same order (recorded calls store ordinals), and each buffer class the model names exists
 * and holds that type.
 */
class DataTypeTest {
  @Test
  void theSameTypesInTheSameOrder() {
    assertEquals(Arrays.stream(ElementType.values()).map(Enum::name).toList(),
        Arrays.stream(DataType.values()).map(Enum::name).toList());
  }

  @Test
  void eachBufferClassTheModelNamesHoldsItsType() throws Exception {
    try (LocalCluster cluster = new LocalCluster(1)) {
      Communicator comm = cluster.call(c -> c).getFirst();
      for (DataType type : DataType.values()) {
        try (Buffer buffer = Buffer.allocate(type, comm, 1)) {
          assertEquals(ElementType.valueOf(type.name()).bufferClassName(), buffer.getClass().getName());
          assertEquals(type, buffer.dataType());
        }
      }
    }
  }
}
