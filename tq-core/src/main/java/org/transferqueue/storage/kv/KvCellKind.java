package org.transferqueue.storage.kv;

/**
 * How a key-value client stores one cell. The storage manager decides it from the column kind of
 * the field, so that a put and a later get of the same cell take the same path even when an object
 * column holds a tensor.
 */
public enum KvCellKind {
  /** A {@link org.transferqueue.tensor.Tensor} stored as its raw bytes, without a header. */
  TENSOR,
  /** Any object value, stored as a packed buffer whose size the client records. */
  OBJECT
}
