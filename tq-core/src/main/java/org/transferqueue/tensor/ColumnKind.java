package org.transferqueue.tensor;

/** The kind of a {@link Column}; stable across a put and a get of the same field. */
public enum ColumnKind {
  /** One tensor {@code [rows, ...]}: see {@link DenseColumn}. */
  DENSE,
  /** One tensor per row, of one dtype, shapes may differ: see {@link JaggedColumn}. */
  JAGGED,
  /** One non-tensor value per row: see {@link ObjectColumn}. */
  OBJECT
}
