package org.transferqueue.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.meta.FieldSchema.shapeOf;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.transferqueue.TqException;
import org.transferqueue.tensor.DType;

class FieldSchemaTest {

  @Test
  void shouldDescribeEachKind() {
    FieldSchema regular = FieldSchema.regular(DType.FLOAT32, 4);
    assertThat(regular.isRegular()).isTrue();
    assertThat(regular.shape()).containsExactly(4L);
    assertThat(regular.shapeAt(7)).containsExactly(4L);

    FieldSchema nested = FieldSchema.nestedOf(DType.INT64, Arrays.asList(shapeOf(2), null));
    assertThat(nested.nested()).isTrue();
    assertThat(nested.shape()).isNull();
    assertThat(nested.shapeAt(0)).containsExactly(2L);
    assertThat(nested.shapeAt(1)).isNull();

    assertThat(FieldSchema.nonTensorField().nonTensor()).isTrue();
    assertThat(FieldSchema.nonTensorField().isPlaceholder()).isFalse();
    assertThat(FieldSchema.placeholder().isPlaceholder()).isTrue();
    assertThat(FieldSchema.regular(DType.INT64).shape()).isEmpty();
  }

  @Test
  void shouldNormaliseShapeOfNestedFieldToNull() {
    FieldSchema nested =
        new FieldSchema(DType.FLOAT32, shapeOf(3), true, false, List.of(shapeOf(3)));
    assertThat(nested.shape()).isNull();
  }

  @Test
  void shouldRejectContradictoryComponents() {
    assertThatThrownBy(() -> new FieldSchema(DType.FLOAT32, null, false, false, null))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("needs a shape")
        .hasMessageContaining("dtype=float32");
    assertThatThrownBy(() -> new FieldSchema(null, null, true, false, List.of()))
        .hasMessageContaining("nested field needs a dtype");
    assertThatThrownBy(() -> new FieldSchema(DType.FLOAT32, null, true, false, null))
        .hasMessageContaining("needs per-sample shapes");
    assertThatThrownBy(() -> new FieldSchema(DType.FLOAT32, shapeOf(1), false, true, null))
        .hasMessageContaining("non-tensor");
    assertThatThrownBy(() -> new FieldSchema(DType.FLOAT32, shapeOf(1), false, false, List.of()))
        .hasMessageContaining("only a nested field");
    assertThatThrownBy(() -> shapeOf(2, -1)).hasMessageContaining("invalid shape [2, -1]");
  }

  @Test
  void shouldCompareByValue() {
    assertThat(FieldSchema.regular(DType.FLOAT32, 2, 3))
        .isEqualTo(FieldSchema.regular(DType.FLOAT32, List.of(2L, 3L)))
        .isNotEqualTo(FieldSchema.regular(DType.FLOAT32, 3, 2));
  }
}
