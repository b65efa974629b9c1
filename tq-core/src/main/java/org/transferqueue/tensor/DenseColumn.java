package org.transferqueue.tensor;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;

/**
 * A column stored as one tensor of shape {@code [rows, d1, ..., dk]}; row {@code i} is the view
 * {@code tensor.row(i)} of shape {@code [d1, ..., dk]} (k = 0 gives 0-d scalar rows).
 *
 * <p>Takes ownership of its tensor: {@link #close()} closes it (which frees nothing if the tensor
 * is itself a view).
 */
public final class DenseColumn implements Column {
  private final Tensor tensor;

  /**
   * Creates a column over a tensor whose dimension 0 is the rows.
   *
   * @param tensor a tensor of rank at least 1; this column takes ownership in every outcome (a
   *     rejected tensor is closed before the exception is thrown)
   * @throws TqException with {@code INVALID_ARGUMENT} for a 0-d tensor or more than {@code
   *     Integer.MAX_VALUE} rows
   */
  public DenseColumn(Tensor tensor) {
    Objects.requireNonNull(tensor, "tensor");
    String rejected = null;
    if (tensor.rank() == 0) {
      rejected = "a dense column needs a tensor of rank >= 1, got " + tensor;
    } else if (tensor.shape(0) > Integer.MAX_VALUE) {
      rejected = "too many rows for a column: " + tensor.shape(0);
    }
    if (rejected != null) {
      tensor.close();
      throw new TqException(ErrorCode.INVALID_ARGUMENT, rejected);
    }
    this.tensor = tensor;
  }

  /**
   * The whole tensor, rows first.
   *
   * @return the tensor this column owns; do not close it separately
   */
  public Tensor tensor() {
    return tensor;
  }

  /**
   * The element type.
   *
   * @return the tensor's dtype
   */
  public DType dtype() {
    return tensor.dtype();
  }

  /**
   * The shape of every row.
   *
   * @return {@code shape[1:]} of the tensor, a copy
   */
  public long[] rowShape() {
    long[] shape = tensor.shape();
    return Arrays.copyOfRange(shape, 1, shape.length);
  }

  /**
   * A zero-copy view of one row.
   *
   * @param i the row
   * @return a view that owns nothing
   * @throws IndexOutOfBoundsException for a row outside {@code [0, rowCount())}
   */
  public Tensor row(int i) {
    return tensor.row(i);
  }

  @Override
  public int rowCount() {
    return (int) tensor.shape(0);
  }

  @Override
  public ColumnKind kind() {
    return ColumnKind.DENSE;
  }

  @Override
  public DenseColumn slice(int from, int to) {
    return new DenseColumn(tensor.rows(from, to));
  }

  @Override
  public DenseColumn selectRows(BufferAllocator allocator, int[] positions) {
    Columns.checkPositions(positions, rowCount());
    long[] shape = tensor.shape();
    shape[0] = positions.length;
    long rowBytes = TensorUtils.nbytes(dtype(), rowShape());
    MemorySegment source = tensor.segment();
    Tensor out = Tensor.allocate(allocator, dtype(), shape);
    MemorySegment target = out.segment();
    for (int i = 0; i < positions.length; i++) {
      MemorySegment.copy(source, positions[i] * rowBytes, target, i * rowBytes, rowBytes);
    }
    return new DenseColumn(out);
  }

  @Override
  public boolean contentEquals(Column other) {
    return other instanceof DenseColumn dense && tensor.contentEquals(dense.tensor);
  }

  @Override
  public void close() {
    tensor.close();
  }

  @Override
  public String toString() {
    return "DenseColumn[" + tensor + "]";
  }
}
