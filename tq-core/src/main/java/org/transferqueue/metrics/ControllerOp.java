package org.transferqueue.metrics;

/**
 * The controller request types, as the {@code op_type} label of the controller request meters. The
 * constant names are the label values.
 */
public enum ControllerOp {
  /** A metadata request (fetch, force-fetch or insert). */
  GET_META,
  /** A production notification from storage; its samples are counted. */
  NOTIFY_DATA_UPDATE,
  /** The metadata of a whole partition. */
  GET_PARTITION_META,
  /** Tags (custom metadata) of samples. */
  SET_CUSTOM_META,
  /** Clearing individual samples; the cleared samples are counted. */
  CLEAR_META,
  /** Clearing a whole partition. */
  CLEAR_PARTITION,
  /** The consumption status of a task. */
  GET_CONSUMPTION,
  /** Resetting a task's consumption. */
  RESET_CONSUMPTION,
  /** The production status of fields. */
  GET_PRODUCTION,
  /** The partition list. */
  GET_LIST_PARTITIONS,
  /** Resolving keys to samples. */
  KV_RETRIEVE_META,
  /** Resolving samples to keys. */
  KV_RETRIEVE_KEYS,
  /** Listing keys and tags. */
  KV_LIST
}
