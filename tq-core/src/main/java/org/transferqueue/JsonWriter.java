package org.transferqueue;

import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The one JSON (RFC 8259) writer of the code base: command output, benchmark reports and checkpoint
 * manifests. Writes maps (keys by {@link String#valueOf}, in iteration order), lists, strings,
 * booleans, numbers, {@code byte[]} (as {@code "base64:..."}) and null; anything else as the quoted
 * {@code toString()}. Strings are quoted by {@link Strings#appendQuoted}. Numbers use {@code
 * toString()}, which does not depend on the default locale.
 *
 * <pre>{@code
 * JsonWriter.COMPACT.write(Map.of("a", List.of(1, 2)));  // {"a":[1,2]}
 * JsonWriter.SPACED.write(Map.of("a", List.of(1, 2)));   // {"a": [1, 2]}
 * JsonWriter.PRETTY.write(Map.of("a", List.of(1, 2)));   // {\n  "a": [1, 2]\n}
 * }</pre>
 *
 * <p>Immutable; thread-safe.
 */
public final class JsonWriter {
  /** How values are laid out. */
  public enum Layout {
    /** No whitespace: {@code {"a":[1,2]}}. */
    COMPACT,
    /** One line, a space after each comma and colon: {@code {"a": [1, 2]}}. */
    SPACED,
    /** An object's entries on their own lines, indented by two spaces; lists stay on one line. */
    PRETTY
  }

  /**
   * What a NaN or infinite {@code double} or {@code float} becomes, since JSON has no such number.
   */
  public enum NonFinite {
    /** Its name as a string: {@code "NaN"}, {@code "Infinity"}, {@code "-Infinity"}. */
    STRING,
    /** {@code null}. */
    NULL
  }

  /** Compact, non-finite numbers as strings: the command line's output. */
  public static final JsonWriter COMPACT = new JsonWriter(Layout.COMPACT, NonFinite.STRING);

  /** One spaced line, non-finite numbers as strings: files people and Python read. */
  public static final JsonWriter SPACED = new JsonWriter(Layout.SPACED, NonFinite.STRING);

  /** Indented, non-finite numbers as null: reports. */
  public static final JsonWriter PRETTY = new JsonWriter(Layout.PRETTY, NonFinite.NULL);

  private final Layout layout;
  private final NonFinite nonFinite;

  /**
   * Creates a writer.
   *
   * @param layout how values are laid out
   * @param nonFinite what NaN and infinities become
   */
  public JsonWriter(Layout layout, NonFinite nonFinite) {
    this.layout = Objects.requireNonNull(layout, "layout");
    this.nonFinite = Objects.requireNonNull(nonFinite, "nonFinite");
  }

  /**
   * Writes one value.
   *
   * @param value the value
   * @return the JSON text, without a trailing newline
   */
  public String write(Object value) {
    return write(new StringBuilder(), value).toString();
  }

  /**
   * Appends one value.
   *
   * @param out where to append
   * @param value the value
   * @return {@code out}
   */
  public StringBuilder write(StringBuilder out, Object value) {
    write(out, value, 0);
    return out;
  }

  private void write(StringBuilder out, Object value, int indent) {
    switch (value) {
      case null -> out.append("null");
      case Boolean b -> out.append(b);
      case Double d when d.isNaN() || d.isInfinite() -> nonFinite(out, d.toString());
      case Float f when f.isNaN() || f.isInfinite() -> nonFinite(out, f.toString());
      case Number n -> out.append(n);
      case String s -> Strings.appendQuoted(out, s);
      case byte[] bytes ->
          Strings.appendQuoted(out, "base64:" + Base64.getEncoder().encodeToString(bytes));
      case Map<?, ?> map -> object(out, map, indent);
      case List<?> list -> {
        out.append('[');
        for (int i = 0; i < list.size(); i++) {
          if (i > 0) {
            out.append(layout == Layout.COMPACT ? "," : ", ");
          }
          write(out, list.get(i), indent + 1);
        }
        out.append(']');
      }
      default -> Strings.appendQuoted(out, value.toString());
    }
  }

  private void object(StringBuilder out, Map<?, ?> map, int indent) {
    out.append('{');
    boolean first = true;
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      switch (layout) {
        case COMPACT -> out.append(first ? "" : ",");
        case SPACED -> out.append(first ? "" : ", ");
        case PRETTY -> out.append(first ? "\n" : ",\n").append("  ".repeat(indent + 1));
      }
      first = false;
      Strings.appendQuoted(out, String.valueOf(entry.getKey()));
      out.append(layout == Layout.COMPACT ? ":" : ": ");
      write(out, entry.getValue(), indent + 1);
    }
    if (layout == Layout.PRETTY && !first) {
      out.append('\n').append("  ".repeat(indent));
    }
    out.append('}');
  }

  private void nonFinite(StringBuilder out, String name) {
    if (nonFinite == NonFinite.NULL) {
      out.append("null");
    } else {
      Strings.appendQuoted(out, name);
    }
  }
}
