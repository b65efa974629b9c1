package org.transferqueue.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Collects the problems of one validation pass and throws them together.
 *
 * <p>Not thread-safe: one instance per {@code build()} call.
 */
final class Problems {
  private final List<ConfigProblem> list = new ArrayList<>();

  void add(String key, Object value, String reason) {
    list.add(ConfigProblem.of(key, value, reason));
  }

  void add(ConfigProblem problem) {
    list.add(problem);
  }

  /**
   * Runs a section's validation and keeps its problems instead of stopping at the first section.
   */
  <T> T collect(Supplier<T> build) {
    try {
      return build.get();
    } catch (ConfigException e) {
      list.addAll(e.problems());
      return null;
    }
  }

  boolean isEmpty() {
    return list.isEmpty();
  }

  List<ConfigProblem> list() {
    return list;
  }

  void throwIfAny() {
    if (!list.isEmpty()) {
      throw new ConfigException(null, list);
    }
  }

  void notNull(String key, Object value) {
    if (value == null) {
      add(key, null, "must be set");
    }
  }

  void atLeast(String key, long value, long min) {
    if (value < min) {
      add(key, value, min == 0 ? "must not be negative" : "must be at least " + min);
    }
  }

  void inRange(String key, long value, long min, long max) {
    if (value < min || value > max) {
      add(key, value, "is not in [" + min + ", " + max + "]");
    }
  }

  void port(String key, int value, boolean zeroAllowed) {
    if (value < (zeroAllowed ? 0 : 1) || value > HostPort.MAX_PORT) {
      add(key, value, "is not a port (" + (zeroAllowed ? "0 = any free port, " : "") + "1-65535)");
    }
  }

  void positive(String key, Duration value) {
    if (value == null) {
      notNull(key, null);
    } else if (value.isNegative() || value.isZero()) {
      list.add(new ConfigProblem(key, ConfigValues.formatDuration(value), "must be positive"));
    }
  }

  void notNegative(String key, Duration value) {
    if (value == null) {
      notNull(key, null);
    } else if (value.isNegative()) {
      list.add(new ConfigProblem(key, ConfigValues.formatDuration(value), "must not be negative"));
    }
  }

  void ratio(String key, double value) {
    if (!(value > 0.0 && value <= 1.0)) {
      add(key, value, "is not a ratio in (0, 1]");
    }
  }

  void notBlank(String key, String value) {
    if (value == null) {
      notNull(key, null);
    } else if (value.isBlank()) {
      add(key, value, "must not be blank");
    }
  }
}
