package org.transferqueue.tensor;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;

/**
 * Validation, structural copy, equality and release of the values an {@link ObjectColumn} holds.
 */
final class ObjectValues {
  /** Deepest nesting of lists and maps accepted; deeper structures (or cycles) are rejected. */
  static final int MAX_DEPTH = 64;

  private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
  private static final BigInteger I64_MIN = BigInteger.valueOf(Long.MIN_VALUE);

  private ObjectValues() {}

  /**
   * Checks a value and returns a copy whose lists and maps are unmodifiable; scalars, byte arrays
   * and tensors are kept as they are, or replaced by {@code tensorCopier} for tensors.
   */
  static Object copy(Object value, int row, int depth, UnaryOperator<Tensor> tensorCopier) {
    if (depth > MAX_DEPTH) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "value of row " + row + " nests lists and maps deeper than " + MAX_DEPTH);
    }
    return switch (value) {
      case null -> null;
      case Boolean b -> b;
      case Long l -> l;
      case Double d -> d;
      case String s -> checkString(s, row);
      case byte[] bytes -> bytes;
      case BigInteger big -> checkBigInteger(big, row);
      case Tensor tensor -> tensorCopier.apply(tensor);
      case List<?> list -> {
        List<Object> out = new ArrayList<>(list.size());
        for (Object element : list) {
          out.add(copy(element, row, depth + 1, tensorCopier));
        }
        yield Collections.unmodifiableList(out);
      }
      case Map<?, ?> map -> {
        Map<Object, Object> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> entry : map.entrySet()) {
          out.put(
              checkKey(entry.getKey(), row), copy(entry.getValue(), row, depth + 1, tensorCopier));
        }
        yield Collections.unmodifiableMap(out);
      }
      default ->
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "row "
                  + row
                  + " holds a "
                  + value.getClass().getName()
                  + "; object columns hold null, Boolean, Long, BigInteger (u64), Double, String,"
                  + " byte[], List, Map and Tensor");
    };
  }

  /** A string of an object value must be valid Unicode, as the wire and the store encode it. */
  private static String checkString(String value, int row) {
    int at = Strings.loneSurrogate(value);
    if (at >= 0) {
      throw Strings.notWellFormed(value, at, "object value of row " + row + ": string");
    }
    return value;
  }

  private static Object checkKey(Object key, int row) {
    if (key instanceof String s) {
      return checkString(s, row);
    }
    if (key instanceof Long || key instanceof Double || key instanceof Boolean) {
      return key;
    }
    throw new TqException(
        ErrorCode.INVALID_ARGUMENT,
        "row "
            + row
            + " has a map key of type "
            + (key == null ? "null" : key.getClass().getName())
            + "; map keys must be String, Long, Double or Boolean");
  }

  private static Object checkBigInteger(BigInteger value, int row) {
    if (value.compareTo(I64_MIN) < 0 || value.compareTo(U64_MAX) > 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "row " + row + " holds the integer " + value + ", outside -2^63 .. 2^64-1");
    }
    return value.bitLength() < 64 ? (Object) value.longValue() : value;
  }

  /** Deep equality: byte arrays by content, tensors by {@link Tensor#contentEquals}. */
  static boolean valueEquals(Object a, Object b) {
    if (a == b) {
      return true;
    }
    return switch (a) {
      case null -> false;
      case byte[] bytes -> b instanceof byte[] other && Arrays.equals(bytes, other);
      case Tensor tensor -> b instanceof Tensor other && tensor.contentEquals(other);
      case List<?> list -> {
        if (!(b instanceof List<?> other) || other.size() != list.size()) {
          yield false;
        }
        for (int i = 0; i < list.size(); i++) {
          if (!valueEquals(list.get(i), other.get(i))) {
            yield false;
          }
        }
        yield true;
      }
      case Map<?, ?> map -> {
        if (!(b instanceof Map<?, ?> other) || other.size() != map.size()) {
          yield false;
        }
        for (Map.Entry<?, ?> entry : map.entrySet()) {
          if (!other.containsKey(entry.getKey())
              || !valueEquals(entry.getValue(), other.get(entry.getKey()))) {
            yield false;
          }
        }
        yield true;
      }
      default -> Objects.equals(a, b);
    };
  }

  /** Closes every tensor inside a value. */
  static void closeTensors(Object value) {
    switch (value) {
      case Tensor tensor -> tensor.close();
      case List<?> list -> list.forEach(ObjectValues::closeTensors);
      case Map<?, ?> map -> map.values().forEach(ObjectValues::closeTensors);
      case null, default -> {}
    }
  }
}
