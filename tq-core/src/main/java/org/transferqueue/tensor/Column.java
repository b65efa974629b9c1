package org.transferqueue.tensor;

import org.transferqueue.memory.BufferAllocator;

/**
 * The values of one field for every row of a {@link Batch}. Kinds are closed: {@link DenseColumn}
 * (one tensor), {@link JaggedColumn} (one tensor per row, shapes differ) and {@link ObjectColumn}
 * (one non-tensor value per row).
 *
 * <p>A column that owns memory frees it on {@link #close()}; views made by {@link #slice} own
 * nothing and must not outlive the column they view. Columns are not thread-safe for writes or
 * close; concurrent reads are safe.
 */
public sealed interface Column extends AutoCloseable
    permits DenseColumn, JaggedColumn, ObjectColumn {

  /**
   * The number of rows.
   *
   * @return zero or more
   */
  int rowCount();

  /**
   * The kind of this column.
   *
   * @return the kind, matching the implementing class
   */
  ColumnKind kind();

  /**
   * A zero-copy view of rows {@code from} (inclusive) to {@code to} (exclusive).
   *
   * @param from the first row
   * @param to one past the last row
   * @return a column of the same kind that owns nothing
   * @throws IndexOutOfBoundsException unless {@code 0 <= from <= to <= rowCount()}
   */
  Column slice(int from, int to);

  /**
   * Copies the rows at the given positions, in that order, into new memory. Positions may repeat.
   *
   * @param allocator where the copy's memory comes from
   * @param positions row indexes, each in {@code [0, rowCount())}
   * @return an independent column of the same kind that the caller owns and must close
   * @throws org.transferqueue.TqException with {@code INVALID_ARGUMENT} naming a position out of
   *     range (nothing is allocated then)
   */
  Column selectRows(BufferAllocator allocator, int[] positions);

  /**
   * Whether another column has the same kind, dtype, row shapes and bytes (or equal values).
   *
   * @param other the column to compare with
   * @return true if the contents are equal
   */
  boolean contentEquals(Column other);

  /** Frees the memory this column owns; idempotent. */
  @Override
  void close();
}
