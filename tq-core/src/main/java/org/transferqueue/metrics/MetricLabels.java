package org.transferqueue.metrics;

/** The label keys of the meters, and the special {@code task_name} of all tasks. */
public final class MetricLabels {
  private MetricLabels() {}

  /** Label: the partition. */
  public static final String PARTITION_ID = "partition_id";

  /** Label: the task ({@link #ALL_TASKS} for production progress over all tasks). */
  public static final String TASK_NAME = "task_name";

  /** Label: the request type ({@link ControllerOp} or {@link StorageOp}). */
  public static final String OP_TYPE = "op_type";

  /** Label: the storage unit. */
  public static final String STORAGE_UNIT_ID = "storage_unit_id";

  /** The {@code task_name} of production progress over all tasks. */
  public static final String ALL_TASKS = "all";
}
