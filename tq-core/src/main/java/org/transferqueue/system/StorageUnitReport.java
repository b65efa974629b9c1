package org.transferqueue.system;

import java.util.Objects;
import java.util.OptionalLong;

/**
 * What one storage unit reports to the metrics collector (the unit's {@code GET_METRICS} reply
 * without its request statistics).
 *
 * @param unitId the unit
 * @param capacity the capacity in samples, empty when unlimited
 * @param activeKeys distinct samples stored
 * @param rssBytes resident memory of the unit's process, 0 if unknown
 */
public record StorageUnitReport(
    String unitId, OptionalLong capacity, long activeKeys, long rssBytes) {
  /** Checks the id and capacity for null. */
  public StorageUnitReport {
    Objects.requireNonNull(unitId, "unitId");
    Objects.requireNonNull(capacity, "capacity");
  }
}
