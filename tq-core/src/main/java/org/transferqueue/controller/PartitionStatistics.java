package org.transferqueue.controller;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Production and consumption statistics of one partition, taken atomically.
 *
 * @param partitionId the partition name
 * @param createdAtMillis creation time, milliseconds since the epoch
 * @param totalSamples the number of active samples (pre-allocated ones are not counted)
 * @param preAllocatedSamples the number of reserved, not yet activated indexes
 * @param totalFields the number of registered fields
 * @param registeredTasks the tasks with a consumption table, in registration order
 * @param producedSamples the number of samples with at least one field produced
 * @param producedPerField per field, the number of samples for which it is produced
 * @param consumedPerTask per task, the number of active samples it has consumed
 */
public record PartitionStatistics(
    String partitionId,
    long createdAtMillis,
    int totalSamples,
    int preAllocatedSamples,
    int totalFields,
    List<String> registeredTasks,
    int producedSamples,
    Map<String, Integer> producedPerField,
    Map<String, Integer> consumedPerTask) {
  /** Copies the collections. */
  public PartitionStatistics {
    registeredTasks = List.copyOf(registeredTasks);
    producedPerField = Collections.unmodifiableMap(new LinkedHashMap<>(producedPerField));
    consumedPerTask = Collections.unmodifiableMap(new LinkedHashMap<>(consumedPerTask));
  }

  /**
   * The share of samples with at least one field produced.
   *
   * @return {@code producedSamples / totalSamples}, or 0 when there are no samples
   */
  public double productionProgress() {
    return ratio(producedSamples);
  }

  /**
   * The share of samples for which a field is produced.
   *
   * @param field a field name
   * @return the ratio, 0 for an unknown field or when there are no samples
   */
  public double productionProgress(String field) {
    return ratio(producedPerField.getOrDefault(field, 0));
  }

  /**
   * The share of samples a task has consumed.
   *
   * @param task a task name
   * @return the ratio, 0 for an unknown task or when there are no samples
   */
  public double consumptionProgress(String task) {
    return ratio(consumedPerTask.getOrDefault(task, 0));
  }

  private double ratio(int count) {
    return totalSamples == 0 ? 0.0 : (double) count / totalSamples;
  }
}
