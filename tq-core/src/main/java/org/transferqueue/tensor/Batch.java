package org.transferqueue.tensor;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;

/**
 * An ordered map from field name to {@link Column}, all columns with one row count.
 *
 * <p><b>Ownership.</b> A batch made by {@link #builder()}, {@link #selectRows} or {@link #concat}
 * owns its columns and closes them, in reverse field order, on {@link #close()}. A batch made by
 * {@link #selectFields}, {@link #slice} or {@link #chunk} is a view that owns nothing, whose {@code
 * close()} does nothing, and which must not outlive the batch it views.
 *
 * <pre>{@code
 * try (Batch batch =
 *     Batch.builder()
 *         .add("input_ids", new DenseColumn(Tensor.ofLongs(allocator, DType.INT64, ids, 2, 4)))
 *         .add("prompt", new ObjectColumn(List.of("a", "b")))
 *         .build()) {
 *   Tensor firstRow = ((DenseColumn) batch.column("input_ids")).row(0);
 * }
 * }</pre>
 *
 * <p>Immutable structure; not thread-safe for close.
 */
public final class Batch implements AutoCloseable {
  private final Map<String, Column> columns;
  private final int rowCount;
  private final boolean ownsColumns;

  private Batch(Map<String, Column> columns, int rowCount, boolean ownsColumns) {
    this.columns = Collections.unmodifiableMap(columns);
    this.rowCount = rowCount;
    this.ownsColumns = ownsColumns;
  }

  /**
   * Starts building a batch.
   *
   * @return an empty builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The number of rows every column has.
   *
   * @return zero or more
   */
  public int rowCount() {
    return rowCount;
  }

  /**
   * The field names in order.
   *
   * @return an unmodifiable list
   */
  public List<String> fields() {
    return List.copyOf(columns.keySet());
  }

  /**
   * The columns by field, in field order.
   *
   * @return an unmodifiable map
   */
  public Map<String, Column> columns() {
    return columns;
  }

  /**
   * Whether the batch has a field.
   *
   * @param field the field name
   * @return true if {@link #column} would find it
   */
  public boolean hasField(String field) {
    return columns.containsKey(field);
  }

  /**
   * The column of a field.
   *
   * @param field the field name
   * @return the column, owned by this batch
   * @throws TqException with {@code UNKNOWN_FIELD} naming the field and the known fields
   */
  public Column column(String field) {
    Column column = columns.get(field);
    if (column == null) {
      throw new TqException(
          ErrorCode.UNKNOWN_FIELD, "no field '" + field + "' in batch with fields " + fields());
    }
    return column;
  }

  /**
   * Copies the rows at the given positions, in that order, into new memory. Positions may repeat.
   *
   * @param allocator where the copy's memory comes from
   * @param positions row indexes, each in {@code [0, rowCount())}
   * @return an independent batch with the same fields that the caller owns and must close
   * @throws TqException with {@code INVALID_ARGUMENT} naming a position out of range
   */
  public Batch selectRows(BufferAllocator allocator, int[] positions) {
    Columns.checkPositions(positions, rowCount);
    Map<String, Column> out = new LinkedHashMap<>();
    try {
      for (Map.Entry<String, Column> entry : columns.entrySet()) {
        out.put(entry.getKey(), entry.getValue().selectRows(allocator, positions));
      }
    } catch (RuntimeException e) {
      closeAll(out.values(), e);
      throw e;
    }
    return new Batch(out, positions.length, true);
  }

  /**
   * A view of some fields, in the order given.
   *
   * @param fields field names, each present once
   * @return a view that owns nothing
   * @throws TqException with {@code UNKNOWN_FIELD} for a missing field, {@code DUPLICATE_KEY} for a
   *     field named twice
   */
  public Batch selectFields(String... fields) {
    Map<String, Column> out = new LinkedHashMap<>();
    for (String field : fields) {
      if (out.put(field, column(field)) != null) {
        throw new TqException(ErrorCode.DUPLICATE_KEY, "field '" + field + "' selected twice");
      }
    }
    return new Batch(out, rowCount, false);
  }

  /**
   * A zero-copy view of rows {@code from} (inclusive) to {@code to} (exclusive).
   *
   * @param from the first row
   * @param to one past the last row
   * @return a view that owns nothing
   * @throws IndexOutOfBoundsException unless {@code 0 <= from <= to <= rowCount()}
   */
  public Batch slice(int from, int to) {
    Objects.checkFromToIndex(from, to, rowCount);
    Map<String, Column> out = new LinkedHashMap<>();
    columns.forEach((field, column) -> out.put(field, column.slice(from, to)));
    return new Batch(out, to - from, false);
  }

  /**
   * Splits the rows into {@code chunks} contiguous zero-copy views whose row counts differ by at
   * most one, the larger ones first (10 rows in 3 chunks give 4, 3, 3). Always returns exactly
   * {@code chunks} batches; some are empty when there are fewer rows than chunks.
   *
   * @param chunks how many parts, at least 1
   * @return views that own nothing, in row order
   * @throws TqException with {@code INVALID_ARGUMENT} for fewer than one chunk
   */
  public List<Batch> chunk(int chunks) {
    if (chunks < 1) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "chunks=" + chunks + " must be >= 1");
    }
    List<Batch> out = new ArrayList<>(chunks);
    int base = rowCount / chunks;
    int extra = rowCount % chunks;
    int from = 0;
    for (int i = 0; i < chunks; i++) {
      int to = from + base + (i < extra ? 1 : 0);
      out.add(slice(from, to));
      from = to;
    }
    return out;
  }

  /**
   * Concatenates batches row-wise into new memory. Every batch must have the same fields (the
   * result takes the first batch's field order). Per field, dense columns of one dtype and row
   * shape give a dense column; tensor columns of one dtype otherwise give a jagged column; object
   * columns give an object column.
   *
   * @param allocator where the result's memory comes from
   * @param batches the parts, in row order (not closed)
   * @return a new batch the caller owns and must close; an empty batch with no fields for an empty
   *     list
   * @throws TqException with {@code INVALID_ARGUMENT} if the field sets differ, {@code
   *     SCHEMA_CONFLICT} if a field's dtypes differ or it mixes tensor and object columns
   */
  public static Batch concat(BufferAllocator allocator, List<Batch> batches) {
    if (batches.isEmpty()) {
      return new Batch(new LinkedHashMap<>(), 0, true);
    }
    List<String> fields = batches.getFirst().fields();
    long rows = 0;
    for (int i = 0; i < batches.size(); i++) {
      Batch batch = batches.get(i);
      if (!batch.columns.keySet().equals(batches.getFirst().columns.keySet())) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "batch " + i + " has fields " + batch.fields() + ", batch 0 has " + fields);
      }
      rows += batch.rowCount;
    }
    if (rows > Integer.MAX_VALUE) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "concatenation has " + rows + " rows");
    }
    Map<String, Column> out = new LinkedHashMap<>();
    try {
      for (String field : fields) {
        List<Column> parts = batches.stream().map(b -> b.columns.get(field)).toList();
        out.put(field, Columns.concat(allocator, field, parts));
      }
    } catch (RuntimeException e) {
      closeAll(out.values(), e);
      throw e;
    }
    return new Batch(out, (int) rows, true);
  }

  /**
   * Whether another batch has the same fields in the same order with equal columns.
   *
   * @param other the batch to compare with
   * @return true if row counts, field order and every column's contents are equal
   */
  public boolean contentEquals(Batch other) {
    if (other == null || other.rowCount != rowCount || !fields().equals(other.fields())) {
      return false;
    }
    for (Map.Entry<String, Column> entry : columns.entrySet()) {
      if (!entry.getValue().contentEquals(other.columns.get(entry.getKey()))) {
        return false;
      }
    }
    return true;
  }

  /**
   * Closes the owned columns in reverse field order; later failures are attached as suppressed.
   * Idempotent; does nothing for a view.
   */
  @Override
  public void close() {
    if (ownsColumns) {
      closeAll(columns.values(), null);
    }
  }

  private static void closeAll(Iterable<Column> columns, RuntimeException primary) {
    List<Column> reversed = new ArrayList<>();
    columns.forEach(reversed::add);
    RuntimeException failure = primary;
    for (Column column : reversed.reversed()) {
      try {
        column.close();
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (primary == null && failure != null) {
      throw failure;
    }
  }

  @Override
  public String toString() {
    StringBuilder out = new StringBuilder("Batch[rows=").append(rowCount);
    columns.forEach((field, column) -> out.append(", ").append(field).append('=').append(column));
    return out.append(']').toString();
  }

  /**
   * Builds a {@link Batch}. The builder takes ownership of each column when it is added: if {@link
   * #add} or {@link #build} throws, every column given to the builder is closed. Not thread-safe.
   */
  public static final class Builder {
    private final Map<String, Column> columns = new LinkedHashMap<>();
    private int rowCount = -1;

    private Builder() {}

    /**
     * Sets the row count explicitly; needed only for a batch without fields.
     *
     * @param rowCount zero or more
     * @return this builder
     */
    public Builder rowCount(int rowCount) {
      if (rowCount < 0) {
        fail(new TqException(ErrorCode.INVALID_ARGUMENT, "rowCount=" + rowCount + " < 0"));
      }
      this.rowCount = rowCount;
      return this;
    }

    /**
     * Adds a field.
     *
     * @param field a non-blank name not yet added
     * @param column its column; the builder takes ownership
     * @return this builder
     * @throws TqException with {@code INVALID_ARGUMENT} for a blank name, {@code DUPLICATE_KEY} for
     *     a name added twice
     */
    public Builder add(String field, Column column) {
      Objects.requireNonNull(column, "column");
      if (field == null || field.isBlank()) {
        column.close();
        fail(new TqException(ErrorCode.INVALID_ARGUMENT, "field name is blank: '" + field + "'"));
      }
      if (columns.containsKey(field)) {
        column.close();
        fail(new TqException(ErrorCode.DUPLICATE_KEY, "field '" + field + "' added twice"));
      }
      columns.put(field, column);
      return this;
    }

    /**
     * Adds a dense field over a tensor.
     *
     * @param field a non-blank name not yet added
     * @param tensor the tensor, rows first; the builder takes ownership
     * @return this builder
     * @throws TqException with {@code INVALID_ARGUMENT} for a 0-d tensor (which is closed, like
     *     every column already added)
     */
    public Builder dense(String field, Tensor tensor) {
      DenseColumn column;
      try {
        column = new DenseColumn(tensor); // closes a tensor it rejects
      } catch (TqException e) {
        fail(e);
        throw e;
      }
      return add(field, column);
    }

    /**
     * Adds an object field.
     *
     * @param field a non-blank name not yet added
     * @param values one value per row (see {@link ObjectColumn})
     * @return this builder
     * @throws TqException with {@code INVALID_ARGUMENT} for an unsupported value, naming the field;
     *     the columns already added are closed, the tensors inside {@code values} are not
     */
    public Builder objects(String field, List<?> values) {
      ObjectColumn column;
      try {
        column = new ObjectColumn(values);
      } catch (TqException e) {
        TqException named =
            new TqException(e.code(), "field " + Strings.quote(field) + ": " + e.getMessage(), e);
        fail(named);
        throw named;
      }
      return add(field, column);
    }

    /**
     * Creates the batch.
     *
     * @return a batch that owns the columns
     * @throws TqException with {@code SHAPE_MISMATCH} naming the field and both row counts if the
     *     columns' row counts differ (or differ from an explicit {@link #rowCount(int)})
     */
    public Batch build() {
      int rows = rowCount;
      String first = rowCount >= 0 ? "rowCount" : null;
      for (Map.Entry<String, Column> entry : columns.entrySet()) {
        int columnRows = entry.getValue().rowCount();
        if (rows < 0) {
          rows = columnRows;
          first = "field '" + entry.getKey() + "'";
        } else if (columnRows != rows) {
          fail(
              new TqException(
                  ErrorCode.SHAPE_MISMATCH,
                  "field '"
                      + entry.getKey()
                      + "' has "
                      + columnRows
                      + " rows, "
                      + first
                      + " has "
                      + rows));
        }
      }
      return new Batch(new LinkedHashMap<>(columns), Math.max(rows, 0), true);
    }

    private void fail(TqException error) {
      closeAll(columns.values(), error);
      columns.clear();
      throw error;
    }
  }
}
