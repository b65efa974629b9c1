package org.transferqueue.metrics;

/**
 * The storage unit request types, as the {@code op_type} label of the storage request meters. The
 * constant names are the label values.
 */
public enum StorageOp {
  /** Storing cells. */
  PUT_DATA,
  /** Reading cells. */
  GET_DATA,
  /** Removing samples. */
  CLEAR_DATA
}
