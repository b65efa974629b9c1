package org.transferqueue.config;

import java.math.BigInteger;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Conversions from configuration values to typed values. Raw values come either from a structured
 * document (YAML: {@code Integer}, {@code Long}, {@code BigInteger}, {@code Double}, {@code
 * Boolean}, {@code String}, {@code List}) or as text (environment variables).
 *
 * <p>Every conversion throws {@link IllegalArgumentException} whose message is a reason phrased to
 * follow the value ("is not an integer"); the caller adds the key and the value.
 */
final class ConfigValues {
  private static final Pattern DURATION =
      Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*(ns|us|ms|s|m|h)?", Pattern.CASE_INSENSITIVE);
  private static final String DURATION_HINT =
      "is not a duration (seconds as a number, or a number with ns, us, ms, s, m or h)";

  private ConfigValues() {}

  /** A mapping of names to values (checked further by the section that takes it), copied. */
  static Map<String, Object> toMapping(Object raw, boolean text) {
    if (!(raw instanceof Map<?, ?> map)) {
      throw new IllegalArgumentException("is not a mapping of names to values");
    }
    Map<String, Object> copy = new LinkedHashMap<>();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!(e.getKey() instanceof String name)) {
        throw new IllegalArgumentException(
            "has a name that is not a string: " + ConfigProblem.render(e.getKey()));
      }
      copy.put(name, e.getValue());
    }
    return copy;
  }

  /** A mapping of names to strings; numbers and booleans are written as text. */
  static Map<String, String> toTextMapping(Object raw, boolean text) {
    Map<String, String> copy = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : toMapping(raw, text).entrySet()) {
      switch (e.getValue()) {
        case String s -> copy.put(e.getKey(), s);
        case Number n when !(n instanceof Double) -> copy.put(e.getKey(), n.toString());
        case Boolean b -> copy.put(e.getKey(), b.toString());
        case null, default ->
            throw new IllegalArgumentException(
                "has a value that is not a string at "
                    + e.getKey()
                    + ": "
                    + ConfigProblem.render(e.getValue()));
      }
    }
    return copy;
  }

  static boolean toBoolean(Object raw, boolean text) {
    if (raw instanceof Boolean b) {
      return b;
    }
    if (text && raw instanceof String s) {
      String t = s.strip().toLowerCase(Locale.ROOT);
      if (t.equals("true")) {
        return true;
      }
      if (t.equals("false")) {
        return false;
      }
    }
    throw new IllegalArgumentException("is not a boolean (true or false)");
  }

  static int toInt(Object raw, boolean text) {
    long v = toLong(raw, text, "an integer");
    if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("is out of range for an integer");
    }
    return (int) v;
  }

  static long toLong(Object raw, boolean text) {
    return toLong(raw, text, "an integer");
  }

  private static long toLong(Object raw, boolean text, String what) {
    switch (raw) {
      case Integer i -> {
        return i;
      }
      case Long l -> {
        return l;
      }
      case BigInteger b -> throw new IllegalArgumentException("is out of range for " + what);
      case String s when text -> {
        try {
          return Long.parseLong(s.strip());
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("is not " + what, e);
        }
      }
      default -> throw new IllegalArgumentException("is not " + what);
    }
  }

  static double toDouble(Object raw, boolean text) {
    double v;
    if (raw instanceof Number n && !(raw instanceof BigInteger)) {
      v = n.doubleValue();
    } else if (text && raw instanceof String s) {
      try {
        v = Double.parseDouble(s.strip());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("is not a number", e);
      }
    } else {
      throw new IllegalArgumentException("is not a number");
    }
    if (!Double.isFinite(v)) {
      throw new IllegalArgumentException("is not a finite number");
    }
    return v;
  }

  static String toText(Object raw, boolean text) {
    if (raw instanceof String s) {
      return s;
    }
    throw new IllegalArgumentException("is not a string (quote it)");
  }

  static Duration toDuration(Object raw, boolean text) {
    return switch (raw) {
      case Integer i -> Duration.ofSeconds(i);
      case Long l -> Duration.ofSeconds(l);
      case Double d when Double.isFinite(d) && Math.abs(d) < 1e12 -> ofSeconds(d);
      case String s -> parseDuration(s.strip());
      default -> throw new IllegalArgumentException(DURATION_HINT);
    };
  }

  private static Duration ofSeconds(double seconds) {
    return Duration.ofNanos(Math.round(seconds * 1e9));
  }

  private static Duration parseDuration(String s) {
    if (s.startsWith("P") || s.startsWith("p") || s.startsWith("-P")) {
      try {
        return Duration.parse(s);
      } catch (DateTimeParseException e) {
        throw new IllegalArgumentException(DURATION_HINT, e);
      }
    }
    Matcher m = DURATION.matcher(s);
    if (!m.matches()) {
      throw new IllegalArgumentException(DURATION_HINT);
    }
    double amount = Double.parseDouble(m.group(1));
    String unit = m.group(2) == null ? "s" : m.group(2).toLowerCase(Locale.ROOT);
    double nanosPerUnit =
        switch (unit) {
          case "ns" -> 1;
          case "us" -> 1e3;
          case "ms" -> 1e6;
          case "s" -> 1e9;
          case "m" -> 60e9;
          default -> 3600e9;
        };
    double nanos = amount * nanosPerUnit;
    if (nanos > Long.MAX_VALUE) {
      throw new IllegalArgumentException("is too long for a duration");
    }
    return Duration.ofNanos(Math.round(nanos));
  }

  /**
   * Formats a duration in the shortest exact unit, in the syntax {@link #toDuration} reads.
   *
   * @param d the duration
   * @return for example {@code 30s}, {@code 500ms}, {@code 1500us}
   */
  static String formatDuration(Duration d) {
    long nanos;
    try {
      nanos = d.toNanos();
    } catch (ArithmeticException e) {
      return d.toString();
    }
    if (nanos % 1_000_000_000L == 0) {
      return nanos / 1_000_000_000L + "s";
    }
    if (nanos % 1_000_000L == 0) {
      return nanos / 1_000_000L + "ms";
    }
    if (nanos % 1_000L == 0) {
      return nanos / 1_000L + "us";
    }
    return nanos + "ns";
  }

  static HostPort toHostPort(Object raw, boolean text) {
    if (raw instanceof String s) {
      return HostPort.parse(s);
    }
    throw new IllegalArgumentException("is not host:port");
  }

  static List<HostPort> toHostPortList(Object raw, boolean text) {
    List<?> items;
    if (raw instanceof List<?> l) {
      items = l;
    } else if (text && raw instanceof String s) {
      items = s.isBlank() ? List.of() : List.of(s.split(","));
    } else {
      throw new IllegalArgumentException("is not a list of host:port");
    }
    List<HostPort> out = new ArrayList<>(items.size());
    for (int i = 0; i < items.size(); i++) {
      Object item = items.get(i);
      try {
        out.add(toHostPort(item, text));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "is not a list of host:port (item " + i + ": " + ConfigProblem.render(item) + ")", e);
      }
    }
    return List.copyOf(out);
  }

  /**
   * Reads a log level: the upstream (Python) names {@code DEBUG}, {@code INFO}, {@code WARNING},
   * {@code ERROR}, {@code CRITICAL} (read as {@code ERROR}) and the JDK's {@code ALL}, {@code
   * TRACE}, {@code OFF}, case-insensitive.
   */
  static System.Logger.Level toLogLevel(Object raw, boolean text) {
    if (raw instanceof String s) {
      String t = s.strip().toUpperCase(Locale.ROOT);
      if (t.equals("CRITICAL")) {
        return System.Logger.Level.ERROR;
      }
      for (System.Logger.Level level : System.Logger.Level.values()) {
        if (level.name().equals(t)) {
          return level;
        }
      }
    }
    throw new IllegalArgumentException(
        "is not a log level (TRACE, DEBUG, INFO, WARNING, ERROR, CRITICAL, OFF)");
  }
}
