package org.transferqueue.config;

import java.util.Locale;

/**
 * Whether a role keeps a write-ahead journal ({@code storage.durability}, and the controller's
 * equivalent): {@code none} keeps data in memory only, {@code journal} journals every acknowledged
 * change under {@code durability.journal_dir} and recovers it at restart.
 */
public enum Durability {
  /** Memory only: a killed process loses what it held. */
  NONE,
  /** A write-ahead journal per role; see the {@code durability} section. */
  JOURNAL;

  /**
   * The YAML spelling.
   *
   * @return {@code none} or {@code journal}
   */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The value a YAML spelling names.
   *
   * @param name {@code none} or {@code journal}
   * @return the value
   * @throws IllegalArgumentException otherwise (reported as a configuration problem)
   */
  public static Durability fromConfigName(String name) {
    for (Durability d : values()) {
      if (d.configName().equals(name)) {
        return d;
      }
    }
    throw new IllegalArgumentException("is not a durability (none or journal)");
  }
}
