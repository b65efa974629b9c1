package org.transferqueue.meta;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;

/**
 * Deep copies of user-supplied metadata values into unmodifiable, JSON-compatible form.
 *
 * <p>Stateless and thread-safe. Values are limited to {@code null}, {@code String}, {@code
 * Boolean}, numbers, {@code List} and {@code Map} with {@code String} keys, and every string (key
 * or value) must be valid Unicode ({@link Strings}); anything else is rejected so that metadata can
 * always be encoded, stored and checkpointed, and reads back unchanged on every path.
 *
 * <p>Public for the controller, which freezes tag and backend-metadata records with the same rules;
 * the other members are package internals.
 */
public final class MetaValues {
  private MetaValues() {}

  /**
   * A copy of a generation column aligned with {@code size} global indexes; null gives every sample
   * {@link BatchMeta#UNKNOWN_GENERATION}.
   *
   * @param generations the column, or null when no generation is known
   * @param size the number of global indexes it must match
   * @param what the record the column belongs to, named in errors
   * @return an unmodifiable copy
   * @throws TqException with {@code INVALID_ARGUMENT} for another length, a null entry or a
   *     generation below -1
   */
  public static List<Long> alignedGenerations(List<Long> generations, int size, String what) {
    if (generations == null) {
      return Collections.nCopies(size, BatchMeta.UNKNOWN_GENERATION);
    }
    if (generations.size() != size) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          what + ": " + generations.size() + " generations for " + size + " global indexes");
    }
    List<Long> copy = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      Long generation = generations.get(i);
      if (generation == null || generation < BatchMeta.UNKNOWN_GENERATION) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            what + ": generation at position " + i + " is " + generation + " (must be >= -1)");
      }
      copy.add(generation);
    }
    return Collections.unmodifiableList(copy);
  }

  /**
   * Deep-copies one value.
   *
   * @param value a JSON-compatible value, possibly null
   * @return an unmodifiable copy; integral numbers become {@code Long}, floating ones {@code
   *     Double}
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for an unsupported value type or a
   *     string that is not valid Unicode
   */
  static Object freeze(Object value) {
    return freeze(value, null);
  }

  /** As {@link #freeze(Object)}; {@code key} is the map key the value is under, for messages. */
  private static Object freeze(Object value, String key) {
    return switch (value) {
      case null -> null;
      case String s -> checkString(s, key);
      case Boolean b -> b;
      case Long l -> l;
      case Integer i -> i.longValue();
      case Short s -> s.longValue();
      case Byte b -> b.longValue();
      case Double d -> d;
      case Float f -> f.doubleValue();
      case BigInteger b -> b;
      case BigDecimal b -> b;
      case Map<?, ?> m -> freezeMapOfAny(m);
      case List<?> l -> freezeList(l, key);
      default ->
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "metadata value of type "
                  + value.getClass().getName()
                  + " is not JSON-compatible (null, String, Boolean, Number, List, Map)");
    };
  }

  /**
   * Deep-copies a map with string keys.
   *
   * @param map the map; null gives an empty map
   * @return an unmodifiable map that keeps the iteration order of {@code map}; integral numbers
   *     become {@code Long}, floating ones {@code Double}
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a null key, a nested map key that is
   *     not a {@code String}, a value that is not JSON-compatible, or a key or string value that is
   *     not valid Unicode
   */
  public static Map<String, Object> freezeMap(Map<String, ?> map) {
    if (map == null || map.isEmpty()) {
      return Map.of();
    }
    return freezeMapOfAny(map);
  }

  private static Map<String, Object> freezeMapOfAny(Map<?, ?> map) {
    LinkedHashMap<String, Object> copy = new LinkedHashMap<>(Math.max(4, map.size() * 2));
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!(e.getKey() instanceof String key)) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "metadata map key must be a String, got " + e.getKey());
      }
      copy.put(Strings.checkWellFormed(key, "metadata map key"), freeze(e.getValue(), key));
    }
    return Collections.unmodifiableMap(copy);
  }

  private static List<Object> freezeList(List<?> list, String key) {
    ArrayList<Object> copy = new ArrayList<>(list.size());
    for (Object o : list) {
      copy.add(freeze(o, key));
    }
    return Collections.unmodifiableList(copy);
  }

  /**
   * Checks the key of one entry set on its own (an extra-info or backend-metadata entry), as {@link
   * #freezeMap} checks the keys of a map.
   *
   * @param key the key
   * @return {@code key}
   * @throws NullPointerException for a null key
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a key that is not valid Unicode
   */
  static String checkKey(String key) {
    Objects.requireNonNull(key, "key");
    return Strings.checkWellFormed(key, "metadata map key");
  }

  private static String checkString(String value, String key) {
    int at = Strings.loneSurrogate(value);
    if (at >= 0) {
      throw Strings.notWellFormed(
          value,
          at,
          key == null ? "metadata value" : "metadata value of key " + Strings.quote(key));
    }
    return value;
  }

  /**
   * Deep-copies a list of per-sample maps.
   *
   * @param rows the rows; null elements become empty maps
   * @return an unmodifiable list of unmodifiable maps
   */
  static List<Map<String, Object>> freezeRows(List<? extends Map<String, ?>> rows) {
    ArrayList<Map<String, Object>> copy = new ArrayList<>(rows.size());
    for (Map<String, ?> row : rows) {
      copy.add(freezeMap(row));
    }
    return Collections.unmodifiableList(copy);
  }

  /**
   * Merges two frozen maps; entries of {@code over} win.
   *
   * @param base the base map; null counts as empty
   * @param over the overriding map, not null
   * @return an unmodifiable merged map; {@code over} itself when {@code base} is null or empty, and
   *     {@code base} itself when {@code over} is empty
   */
  public static Map<String, Object> merge(Map<String, Object> base, Map<String, Object> over) {
    if (base == null || base.isEmpty()) {
      return over;
    }
    if (over.isEmpty()) {
      return base;
    }
    LinkedHashMap<String, Object> merged = new LinkedHashMap<>(base);
    merged.putAll(over);
    return Collections.unmodifiableMap(merged);
  }

  /**
   * Unions the extra-info maps of several batches, rejecting conflicting values.
   *
   * <p>Values are equal when they have the same runtime type and equal content; after {@link
   * #freeze} that means {@code 1} and {@code 1.0} conflict.
   *
   * @param maps the frozen maps, in batch order
   * @return the union, first occurrence order
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} naming the key on conflicting values
   */
  static Map<String, Object> unionExtraInfo(List<Map<String, Object>> maps) {
    LinkedHashMap<String, Object> union = new LinkedHashMap<>();
    for (Map<String, Object> map : maps) {
      for (Map.Entry<String, Object> e : map.entrySet()) {
        String key = e.getKey();
        if (!union.containsKey(key)) {
          union.put(key, e.getValue());
        } else if (!sameValue(union.get(key), e.getValue())) {
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "extra info key '"
                  + key
                  + "' has conflicting values across batches: "
                  + union.get(key)
                  + " vs "
                  + e.getValue());
        }
      }
    }
    return union.isEmpty() ? Map.of() : Collections.unmodifiableMap(union);
  }

  private static boolean sameValue(Object a, Object b) {
    if (a == null || b == null) {
      return a == b;
    }
    return a.getClass() == b.getClass() && Objects.equals(a, b) || sameContainer(a, b);
  }

  private static boolean sameContainer(Object a, Object b) {
    if (a instanceof List<?> la && b instanceof List<?> lb) {
      if (la.size() != lb.size()) {
        return false;
      }
      for (int i = 0; i < la.size(); i++) {
        if (!sameValue(la.get(i), lb.get(i))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
      if (!ma.keySet().equals(mb.keySet())) {
        return false;
      }
      for (Map.Entry<?, ?> e : ma.entrySet()) {
        if (!sameValue(e.getValue(), mb.get(e.getKey()))) {
          return false;
        }
      }
      return true;
    }
    return false;
  }
}
