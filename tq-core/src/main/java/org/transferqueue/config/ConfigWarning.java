package org.transferqueue.config;

import java.util.Objects;

/**
 * A setting that is valid but has no effect in this build, with the reason: what a process started
 * from the configuration logs once at start-up instead of ignoring it silently.
 *
 * <p>{@link #toString()} reads {@code key: value reason}, for example {@code
 * backend.MooncakeStore.protocol: "rdma" has no effect in this build: data moves over TCP}.
 *
 * @param key the full dotted key
 * @param value the value as configured, rendered as in {@link ConfigProblem}
 * @param reason why it has no effect, phrased to follow the value
 */
public record ConfigWarning(String key, String value, String reason) {

  /**
   * Validates the components.
   *
   * @throws NullPointerException if any component is null
   */
  public ConfigWarning {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(reason, "reason");
  }

  @Override
  public String toString() {
    return key + ": " + value + " " + reason;
  }
}
