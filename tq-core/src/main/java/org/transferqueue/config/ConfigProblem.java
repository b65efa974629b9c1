package org.transferqueue.config;

import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * One invalid configuration entry: the dotted key, the offending value as written and what is
 * wrong.
 *
 * <p>{@link #toString()} reads {@code key: value reason}, for example {@code
 * backend.SimpleStorage.num_data_storage_units: "three" is not an integer}.
 *
 * @param key the full dotted key (upstream YAML path), or an environment variable with its key
 * @param value the value rendered for a message: strings quoted, {@code null} for a missing value,
 *     secrets redacted
 * @param reason what is wrong, phrased to follow the value ("is not an integer")
 */
public record ConfigProblem(String key, String value, String reason) {

  /** Replaces the value of secret keys in messages. */
  static final String REDACTED = "<redacted>";

  /**
   * Validates the components.
   *
   * @throws NullPointerException if any component is null
   */
  public ConfigProblem {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(reason, "reason");
  }

  /**
   * Creates a problem for a raw value, rendering it for the message.
   *
   * @param key the dotted key
   * @param rawValue the value as read (string, number, boolean, list, map or null)
   * @param reason what is wrong
   * @return the problem
   */
  public static ConfigProblem of(String key, Object rawValue, String reason) {
    return new ConfigProblem(key, render(rawValue), reason);
  }

  /**
   * Renders a configuration value the way a user wrote it: strings in double quotes, lists in
   * brackets, maps in braces, everything else by {@code toString}.
   *
   * @param value the value, may be null
   * @return the rendering
   */
  public static String render(Object value) {
    return switch (value) {
      case null -> "null";
      case CharSequence s -> quote(s.toString());
      case Collection<?> c ->
          c.stream().map(ConfigProblem::render).collect(Collectors.joining(", ", "[", "]"));
      case Map<?, ?> m ->
          m.entrySet().stream()
              .map(e -> render(e.getKey()) + ": " + render(e.getValue()))
              .collect(Collectors.joining(", ", "{", "}"));
      default -> value.toString();
    };
  }

  private static String quote(String s) {
    StringBuilder out = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\t' -> out.append("\\t");
        default -> out.append(c);
      }
    }
    return out.append('"').toString();
  }

  @Override
  public String toString() {
    return key + ": " + value + " " + reason;
  }
}
