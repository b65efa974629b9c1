package org.transferqueue.system;

/**
 * Asks one storage unit for its {@link StorageUnitReport}. The collector calls each probe on its
 * own; a probe that throws skips its unit for that collection only.
 */
@FunctionalInterface
public interface StorageUnitProbe {
  /**
   * Queries the unit.
   *
   * @return the unit's report
   */
  StorageUnitReport probe();
}
