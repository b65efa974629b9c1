package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The EQ relation of the acceptance scenarios (client-api §4): per row, exact for integer, bool,
 * bfloat16 and float16 values, within a float tolerance for float32 and float64, NaN positions and
 * infinities identical, object values equal by value (byte strings by content, maps and lists
 * element-wise, nested tensors by EQ). Column kinds must match too (kinds are stable, DESIGN §4).
 */
final class Eq {
  private static final double FLOAT_TOLERANCE = 1e-6;

  private Eq() {}

  /** Every field of {@code expected} is in {@code actual}, and no other, EQ row by row. */
  static void assertBatchEq(Batch actual, Batch expected) {
    assertThat(actual.rowCount()).as("row count").isEqualTo(expected.rowCount());
    assertThat(actual.fields()).as("fields").containsExactlyInAnyOrderElementsOf(expected.fields());
    for (String field : expected.fields()) {
      assertColumnEq(field, actual.column(field), expected.column(field));
    }
  }

  /** The listed fields of {@code actual} are EQ to those of {@code expected}. */
  static void assertFieldsEq(Batch actual, Batch expected, List<String> fields) {
    assertThat(actual.rowCount()).as("row count").isEqualTo(expected.rowCount());
    for (String field : fields) {
      assertColumnEq(field, actual.column(field), expected.column(field));
    }
  }

  /** Two columns of one kind with EQ rows. */
  static void assertColumnEq(String field, Column actual, Column expected) {
    assertThat(actual.kind()).as("kind of '%s'", field).isEqualTo(expected.kind());
    assertThat(actual.rowCount()).as("rows of '%s'", field).isEqualTo(expected.rowCount());
    assertRowsEq(field, actual, 0, expected, 0, expected.rowCount());
  }

  /**
   * Rows {@code actualFrom ..} of {@code actual} are EQ to rows {@code expectedFrom ..} of {@code
   * expected}, {@code count} of them. Dense and jagged rows compare alike, by row tensor.
   */
  static void assertRowsEq(
      String field, Column actual, int actualFrom, Column expected, int expectedFrom, int count) {
    for (int k = 0; k < count; k++) {
      String what = "'" + field + "' row " + (actualFrom + k);
      Object a = rowValue(actual, actualFrom + k);
      Object e = rowValue(expected, expectedFrom + k);
      assertValueEq(what, a, e);
    }
  }

  /** The value of one row: a tensor for tensor columns, the object for object columns. */
  static Object rowValue(Column column, int row) {
    return switch (column) {
      case DenseColumn dense -> dense.row(row);
      case JaggedColumn jagged -> jagged.row(row);
      case ObjectColumn objects -> objects.get(row);
    };
  }

  /** EQ of two values, tensors included. */
  static void assertValueEq(String what, Object actual, Object expected) {
    switch (expected) {
      case null -> assertThat(actual).as(what).isNull();
      case Tensor e -> {
        assertThat(actual).as(what).isInstanceOf(Tensor.class);
        assertTensorEq(what, (Tensor) actual, e);
      }
      case byte[] e -> {
        assertThat(actual).as(what).isInstanceOf(byte[].class);
        assertThat((byte[]) actual).as(what).isEqualTo(e);
      }
      case Map<?, ?> e -> {
        assertThat(actual).as(what).isInstanceOf(Map.class);
        Map<?, ?> a = (Map<?, ?>) actual;
        assertThat(new HashSet<Object>(a.keySet()))
            .as(what + " keys")
            .isEqualTo(new HashSet<Object>(e.keySet()));
        for (Map.Entry<?, ?> entry : e.entrySet()) {
          assertValueEq(what + "." + entry.getKey(), a.get(entry.getKey()), entry.getValue());
        }
      }
      case List<?> e -> {
        assertThat(actual).as(what).isInstanceOf(List.class);
        List<?> a = (List<?>) actual;
        assertThat(a).as(what + " size").hasSize(e.size());
        for (int i = 0; i < e.size(); i++) {
          assertValueEq(what + "[" + i + "]", a.get(i), e.get(i));
        }
      }
      default -> assertThat(actual).as(what).isEqualTo(expected);
    }
  }

  /** EQ of two tensors: dtype, shape, then every element. */
  static void assertTensorEq(String what, Tensor actual, Tensor expected) {
    assertThat(actual.dtype()).as(what + " dtype").isEqualTo(expected.dtype());
    assertThat(actual.shape())
        .as(what + " shape " + Arrays.toString(actual.shape()))
        .isEqualTo(expected.shape());
    DType dtype = expected.dtype();
    for (long i = 0; i < expected.numel(); i++) {
      if (!elementEq(dtype, actual, expected, i)) {
        fail(
            "%s element %d: expected %s but was %s (dtype %s)",
            what, i, element(dtype, expected, i), element(dtype, actual, i), dtype);
      }
    }
  }

  private static boolean elementEq(DType dtype, Tensor a, Tensor e, long i) {
    return switch (dtype) {
      case FLOAT32, FLOAT64 -> {
        double x = a.getDouble(i);
        double y = e.getDouble(i);
        if (Double.isNaN(y) || Double.isInfinite(y)) {
          yield Double.compare(x, y) == 0;
        }
        yield !Double.isNaN(x) && Math.abs(x - y) <= FLOAT_TOLERANCE * Math.max(1.0, Math.abs(y));
      }
      case FLOAT16, BFLOAT16 -> {
        float x = a.getFloat(i);
        float y = e.getFloat(i);
        yield Float.isNaN(y) ? Float.isNaN(x) : Float.compare(x, y) == 0;
      }
      default -> a.getLong(i) == e.getLong(i);
    };
  }

  private static Object element(DType dtype, Tensor t, long i) {
    return dtype.isFloatingPoint() ? t.getDouble(i) : t.getLong(i);
  }

  /** The elements of a row tensor as doubles, for literal comparisons. */
  static double[] doubles(Column column, int row) {
    return ((Tensor) rowValue(column, row)).toDoubleArray();
  }

  /** The elements of a row tensor as longs, for literal comparisons. */
  static long[] longs(Column column, int row) {
    return ((Tensor) rowValue(column, row)).toLongArray();
  }
}
