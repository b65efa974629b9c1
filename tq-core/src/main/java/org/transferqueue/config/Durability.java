package org.transferqueue.config;

import java.util.Locale;

/**
 * Whether a role journals its changes ({@code controller.durability}, {@code storage.durability}).
 */
public enum Durability {
  /** No journal: a killed process loses what it held since its last checkpoint. */
  NONE,
  /**
   * A write-ahead journal under {@code durability.journal_dir}: every acknowledged change survives a
   * kill of the process (and, with {@code durability.sync: fsync}, of the machine).
   */
  JOURNAL;

  /**
   * The name used in configuration files.
   *
   * @return {@code none} or {@code journal}
   */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Looks a mode up by its configuration name (exact, lower case).
   *
   * @param name the configured name
   * @return the mode
   * @throws IllegalArgumentException with a reason phrased to follow the value when unknown
   */
  public static Durability fromConfigName(String name) {
    for (Durability d : values()) {
      if (d.configName().equals(name)) {
        return d;
      }
    }
    throw new IllegalArgumentException("is not a durability mode (none or journal)");
  }
}
