package org.transferqueue.codec;

import java.lang.foreign.MemorySegment;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/** Seeded generator of object values, and structural equality for them. */
final class RandomValues {
  private static final String[] STRINGS = {
    "", "a", "hello", "你好世界🌍🚀 émojis and ümläuts ", "\u0000nul", "tab\tnew\nline", "𝄞"
  };
  private static final double[] DOUBLES = {
    Double.NaN,
    Double.POSITIVE_INFINITY,
    Double.NEGATIVE_INFINITY,
    0.0,
    -0.0,
    Double.MIN_VALUE,
    Double.MAX_VALUE,
    -Double.MAX_VALUE,
    1e-10,
    3.5
  };
  private static final long[] LONGS = {
    Long.MIN_VALUE,
    Long.MAX_VALUE,
    0,
    -1,
    1,
    127,
    128,
    -32,
    -33,
    255,
    256,
    65535,
    65536,
    Integer.MIN_VALUE,
    Integer.MAX_VALUE,
    1L << 32
  };

  private final Random random;
  private final BufferAllocator allocator;
  private final List<Tensor> tensors = new ArrayList<>();

  RandomValues(Random random, BufferAllocator allocator) {
    this.random = random;
    this.allocator = allocator;
  }

  /** Tensors created so far; the caller closes them. */
  List<Tensor> tensors() {
    return tensors;
  }

  Object value(int depth) {
    int kind = random.nextInt(depth >= 4 ? 9 : 12);
    return switch (kind) {
      case 0 -> null;
      case 1 -> random.nextBoolean();
      case 2 -> random.nextBoolean() ? LONGS[random.nextInt(LONGS.length)] : random.nextLong();
      case 3 ->
          random.nextBoolean() ? DOUBLES[random.nextInt(DOUBLES.length)] : random.nextGaussian();
      case 4 -> string();
      case 5 -> bytes();
      case 6 -> tensor();
      case 7 -> BigInteger.ONE.shiftLeft(63).add(BigInteger.valueOf(random.nextLong() >>> 1));
      case 8 -> random.nextBoolean() ? new ArrayList<>() : new LinkedHashMap<>();
      case 9, 10 -> list(depth);
      default -> map(depth);
    };
  }

  Tensor tensor() {
    DType dtype = DType.values()[random.nextInt(DType.values().length)];
    int rank = random.nextInt(4);
    long[] shape = new long[rank];
    for (int i = 0; i < rank; i++) {
      shape[i] = random.nextInt(5);
    }
    Tensor tensor = Tensor.allocate(allocator, dtype, shape);
    tensors.add(tensor);
    byte[] bytes = new byte[(int) tensor.nbytes()];
    random.nextBytes(bytes);
    if (dtype == DType.BOOL) {
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] &= 1;
      }
    }
    MemorySegment.copy(MemorySegment.ofArray(bytes), 0, tensor.segment(), 0, bytes.length);
    return tensor;
  }

  private String string() {
    if (random.nextInt(4) > 0) {
      return STRINGS[random.nextInt(STRINGS.length)];
    }
    StringBuilder builder = new StringBuilder();
    int length = random.nextInt(40);
    while (builder.length() < length) {
      int codePoint = random.nextInt(Character.MAX_CODE_POINT + 1);
      if (codePoint < Character.MIN_SURROGATE || codePoint > Character.MAX_SURROGATE) {
        builder.appendCodePoint(codePoint);
      }
    }
    return builder.toString();
  }

  private byte[] bytes() {
    byte[] bytes = new byte[random.nextInt(20)];
    random.nextBytes(bytes);
    return bytes;
  }

  private List<Object> list(int depth) {
    int size = random.nextInt(5);
    List<Object> list = new ArrayList<>(size);
    for (int i = 0; i < size; i++) {
      list.add(value(depth + 1));
    }
    return list;
  }

  private Map<Object, Object> map(int depth) {
    int size = random.nextInt(5);
    Map<Object, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < size; i++) {
      Object key = random.nextBoolean() ? (Object) string() : (Object) random.nextLong();
      map.put(key, value(depth + 1));
    }
    return map;
  }

  /** Structural equality: byte[] by content, tensors by dtype, shape and bits, doubles by bits. */
  static boolean deepEquals(Object expected, Object actual) {
    return switch (expected) {
      case null -> actual == null;
      case byte[] bytes -> actual instanceof byte[] other && Arrays.equals(bytes, other);
      case Tensor tensor -> actual instanceof Tensor other && tensor.contentEquals(other);
      case List<?> list -> actual instanceof List<?> other && listEquals(list, other);
      case Map<?, ?> map -> actual instanceof Map<?, ?> other && mapEquals(map, other);
      default -> expected.equals(actual) && expected.getClass() == actual.getClass();
    };
  }

  private static boolean listEquals(List<?> expected, List<?> actual) {
    if (expected.size() != actual.size()) {
      return false;
    }
    for (int i = 0; i < expected.size(); i++) {
      if (!deepEquals(expected.get(i), actual.get(i))) {
        return false;
      }
    }
    return true;
  }

  private static boolean mapEquals(Map<?, ?> expected, Map<?, ?> actual) {
    if (expected.size() != actual.size()) {
      return false;
    }
    Iterator<? extends Map.Entry<?, ?>> other = actual.entrySet().iterator();
    for (Map.Entry<?, ?> entry : expected.entrySet()) {
      Map.Entry<?, ?> next = other.next();
      if (!Objects.equals(entry.getKey(), next.getKey())
          || !deepEquals(entry.getValue(), next.getValue())) {
        return false;
      }
    }
    return true;
  }
}
