package org.transferqueue.tensor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.transferqueue.memory.BufferAllocator;

/**
 * A column of one non-tensor value per row. A value is one of: {@code null}, {@link Boolean},
 * {@link Long}, {@link java.math.BigInteger} (up to 2^64-1; one that fits a long is stored as a
 * Long), {@link Double}, {@link String}, {@code byte[]}, {@link List} and {@link java.util.Map}
 * (keys String, Long, Double or Boolean) of values, and {@link Tensor} (at the top or nested in
 * lists and maps). Other types (Integer, Float, sets, arrays other than byte[]) are rejected, and
 * so are strings (values or map keys) that are not valid Unicode ({@link
 * org.transferqueue.Strings}): the wire and the object store carry strings as UTF-8.
 *
 * <p>The column keeps an unmodifiable structural copy of the lists and maps it was given (byte
 * arrays and tensors are not copied). It takes ownership of the tensors inside its values and
 * closes them on {@link #close()}; a {@link #slice} owns none.
 */
public final class ObjectColumn implements Column {
  private final List<Object> values;
  private final boolean ownsTensors;

  /**
   * Creates a column, checking every value.
   *
   * @param values one value per row; the column takes ownership of the tensors among them
   * @throws org.transferqueue.TqException with {@code INVALID_ARGUMENT} naming the offending class
   *     and row, for a map key of another type, for a string with a lone surrogate (shown escaped,
   *     with its index), or for structures nested deeper than 64 levels
   */
  public ObjectColumn(List<?> values) {
    this(copyValues(values, UnaryOperator.identity()), true);
  }

  private ObjectColumn(List<Object> checkedValues, boolean ownsTensors) {
    this.values = checkedValues;
    this.ownsTensors = ownsTensors;
  }

  private static List<Object> copyValues(List<?> values, UnaryOperator<Tensor> tensorCopier) {
    Objects.requireNonNull(values, "values");
    List<Object> out = new ArrayList<>(values.size());
    for (int row = 0; row < values.size(); row++) {
      out.add(ObjectValues.copy(values.get(row), row, 0, tensorCopier));
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * All values, one per row.
   *
   * @return an unmodifiable list
   */
  public List<Object> values() {
    return values;
  }

  /**
   * The value of one row.
   *
   * @param row the row
   * @return the value, possibly null
   * @throws IndexOutOfBoundsException for a row outside {@code [0, rowCount())}
   */
  public Object get(int row) {
    return values.get(row);
  }

  @Override
  public int rowCount() {
    return values.size();
  }

  @Override
  public ColumnKind kind() {
    return ColumnKind.OBJECT;
  }

  @Override
  public ObjectColumn slice(int from, int to) {
    Objects.checkFromToIndex(from, to, values.size());
    return new ObjectColumn(values.subList(from, to), false);
  }

  /**
   * Copies the selected rows; tensors inside them are copied into new memory.
   *
   * @param allocator where copied tensors' memory comes from
   * @param positions row indexes, each in {@code [0, rowCount())}
   * @return an independent column the caller owns and must close
   */
  @Override
  public ObjectColumn selectRows(BufferAllocator allocator, int[] positions) {
    Columns.checkPositions(positions, values.size());
    List<Object> selected = new ArrayList<>(positions.length);
    for (int position : positions) {
      selected.add(values.get(position));
    }
    return copyOf(allocator, selected);
  }

  /**
   * Copies values into a new column, copying the tensors among them into new memory.
   *
   * @param allocator where copied tensors' memory comes from
   * @param values the values (not modified; their tensors are not closed)
   * @return a column the caller owns and must close
   */
  static ObjectColumn copyOf(BufferAllocator allocator, List<?> values) {
    List<Tensor> copies = new ArrayList<>();
    try {
      return new ObjectColumn(
          copyValues(
              values,
              tensor -> {
                Tensor copy = Tensor.copyOf(allocator, tensor);
                copies.add(copy);
                return copy;
              }),
          true);
    } catch (RuntimeException e) {
      copies.forEach(Tensor::close);
      throw e;
    }
  }

  @Override
  public boolean contentEquals(Column other) {
    return other instanceof ObjectColumn column && ObjectValues.valueEquals(values, column.values);
  }

  @Override
  public void close() {
    if (ownsTensors) {
      values.forEach(ObjectValues::closeTensors);
    }
  }

  @Override
  public String toString() {
    return "ObjectColumn[rows=" + values.size() + "]";
  }
}
