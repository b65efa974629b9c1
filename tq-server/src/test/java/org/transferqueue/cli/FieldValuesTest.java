package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

@ExtendWith(LeakCheckExtension.class)
class FieldValuesTest {

  @Test
  void shouldTakeTheShapeFromTheNestingOfArrays(BufferAllocator allocator) {
    try (Tensor t = FieldValues.tensor("x", "float32", "[[1,2.5],[3,4],[5,6]]", allocator);
        Tensor scalar = FieldValues.tensor("s", "torch.int16", "-7", allocator);
        Tensor empty = FieldValues.tensor("e", "int64", "[]", allocator);
        Tensor flags = FieldValues.tensor("b", "bool", "[true,0,1]", allocator)) {
      assertThat(t.dtype()).isEqualTo(DType.FLOAT32);
      assertThat(t.shape()).containsExactly(3, 2);
      assertThat(t.toFloatArray()).containsExactly(1f, 2.5f, 3f, 4f, 5f, 6f);
      assertThat(scalar.shape()).isEmpty();
      assertThat(scalar.getLong(0)).isEqualTo(-7);
      assertThat(empty.shape()).containsExactly(0);
      assertThat(flags.toLongArray()).containsExactly(1, 0, 1);
    }
  }

  @Test
  void shouldAcceptTheLimitsOfEachIntegerDtype(BufferAllocator allocator) {
    Map<String, long[]> limits =
        Map.of(
            "uint8", new long[] {0, 255},
            "int8", new long[] {-128, 127},
            "int16", new long[] {Short.MIN_VALUE, Short.MAX_VALUE},
            "int32", new long[] {Integer.MIN_VALUE, Integer.MAX_VALUE},
            "int64", new long[] {Long.MIN_VALUE, Long.MAX_VALUE});
    limits.forEach(
        (dtype, range) -> {
          try (Tensor t =
              FieldValues.tensor("x", dtype, "[" + range[0] + "," + range[1] + "]", allocator)) {
            assertThat(t.toLongArray()).as(dtype).containsExactly(range);
          }
          for (long outside : new long[] {range[0] - 1, range[1] + 1}) {
            if (outside == Long.MAX_VALUE || outside == Long.MIN_VALUE) {
              continue; // wrapped: int64 is checked with the BigInteger cases
            }
            assertThatThrownBy(() -> FieldValues.tensor("x", dtype, "[" + outside + "]", allocator))
                .as(dtype)
                .hasMessage("field 'x': value " + outside + " is out of range for " + dtype);
          }
        });
    assertThatThrownBy(() -> FieldValues.tensor("x", "int64", "[9223372036854775808]", allocator))
        .hasMessage("field 'x': value 9223372036854775808 is out of range for int64");
  }

  @Test
  void shouldRejectBadTensorsWithTypedErrors(BufferAllocator allocator) {
    assertThatThrownBy(() -> FieldValues.tensor("x", "float128", "[1]", allocator))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_DTYPE))
        .hasMessageStartingWith("field 'x': unknown dtype 'float128' (known: [bool, uint8");
    assertThatThrownBy(() -> FieldValues.tensor("x", "int64", "[[1],2]", allocator))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.SHAPE_MISMATCH))
        .hasMessage("field 'x': ragged array [[1],2] (the first elements give shape [2, 1])");
    assertThatThrownBy(() -> FieldValues.tensor("x", "int64", "[1,[2]]", allocator))
        .hasMessageContaining("ragged array [1,[2]]");
    assertThatThrownBy(() -> FieldValues.tensor("x", "bool", "[2]", allocator))
        .hasMessage("field 'x': value 2 is out of range for bool");
    assertThatThrownBy(() -> FieldValues.tensor("x", "float32", "[1e39]", allocator))
        .hasMessage("field 'x': value 1.0E39 is out of range for float32");
    assertThatThrownBy(() -> FieldValues.tensor("x", "float64", "[null]", allocator))
        .hasMessage("field 'x': element null is not a number (dtype float64)");
  }

  @Test
  void shouldParseFieldsInOrderAndCloseTensorsOnFailure(BufferAllocator allocator) {
    Map<String, Object> values =
        FieldValues.parseFields(
            List.of("ids=int64:[1,2]", "note=\"a=b\"", "m={\"k\":[1]}", "z=null"), allocator);
    try {
      assertThat(values.keySet()).containsExactly("ids", "note", "m", "z");
      assertThat(values.get("ids")).isInstanceOf(Tensor.class);
      assertThat(values.get("note")).isEqualTo("a=b");
      assertThat(values.get("m")).isEqualTo(Map.of("k", List.of(1L)));
      assertThat(values.get("z")).isNull();
    } finally {
      FieldValues.close(values);
    }
    // The tensor made before the failing argument is released (the leak check would fail).
    assertThatThrownBy(
            () -> FieldValues.parseFields(List.of("ids=int64:[1]", "x=int8:[999]"), allocator))
        .hasMessageContaining("value 999");
    assertThatThrownBy(
            () -> FieldValues.parseFields(List.of("a=int64:[1]", "a=int64:[2]"), allocator))
        .hasMessage("field 'a' is given more than once");
    assertThatThrownBy(() -> FieldValues.parseJsonArguments(List.of("=1")))
        .hasMessageContaining("argument '=1' is not NAME=VALUE");
  }
}
