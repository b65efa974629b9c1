package org.transferqueue.controller;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Deep, unmodifiable copies of tag records, so that the controller never shares a mutable map with
 * a caller. Accepts the JSON-compatible values a {@code BatchMeta} carries (null, String, Boolean,
 * numbers, List, Map with String keys) and rejects the rest when the tags are written, not when
 * they are read. Stateless and thread-safe.
 */
final class TagValues {
  private TagValues() {}

  static Map<String, Object> freeze(Map<String, ?> record) {
    if (record == null || record.isEmpty()) {
      return Map.of();
    }
    LinkedHashMap<String, Object> copy = new LinkedHashMap<>();
    for (Map.Entry<String, ?> e : record.entrySet()) {
      if (e.getKey() == null) {
        throw new TqException(ErrorCode.INVALID_ARGUMENT, "tag key is null in " + record);
      }
      copy.put(e.getKey(), freezeValue(e.getValue()));
    }
    return Collections.unmodifiableMap(copy);
  }

  static Map<String, Object> merge(Map<String, Object> base, Map<String, Object> over) {
    if (base == null || base.isEmpty()) {
      return over;
    }
    LinkedHashMap<String, Object> merged = new LinkedHashMap<>(base);
    merged.putAll(over);
    return Collections.unmodifiableMap(merged);
  }

  private static Object freezeValue(Object value) {
    return switch (value) {
      case null -> null;
      case Map<?, ?> map -> {
        LinkedHashMap<String, Object> copy = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map.entrySet()) {
          if (!(e.getKey() instanceof String key)) {
            throw new TqException(
                ErrorCode.INVALID_ARGUMENT, "tag map key must be a String, got " + e.getKey());
          }
          copy.put(key, freezeValue(e.getValue()));
        }
        yield Collections.unmodifiableMap(copy);
      }
      case List<?> list -> {
        ArrayList<Object> copy = new ArrayList<>(list.size());
        for (Object o : list) {
          copy.add(freezeValue(o));
        }
        yield Collections.unmodifiableList(copy);
      }
      case String s -> s;
      case Boolean b -> b;
      case Long l -> l;
      case Integer i -> i.longValue();
      case Short s -> s.longValue();
      case Byte b -> b.longValue();
      case Double d -> d;
      case Float f -> f.doubleValue();
      case BigInteger b -> b;
      case BigDecimal b -> b;
      default ->
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "tag value of type "
                  + value.getClass().getName()
                  + " is not JSON-compatible (null, String, Boolean, Number, List, Map)");
    };
  }
}
