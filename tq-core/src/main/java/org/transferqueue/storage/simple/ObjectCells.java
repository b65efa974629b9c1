package org.transferqueue.storage.simple;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Tensor;

/**
 * Deep copies of object-cell values in and out of a storage unit.
 *
 * <p>Object cells are kept as immutable Java values rather than encoded bytes: a stored value is a
 * frozen deep copy (unmodifiable lists and maps, cloned {@code byte[]}, and tensors copied into
 * memory of the unit's allocator), and a read returns a fresh, writable deep copy (tensors copied
 * into the reader's allocator). Neither the writer nor a reader can therefore change stored data.
 * Supported values are those of {@link org.transferqueue.tensor.ObjectColumn}: {@code null}, {@code
 * Boolean}, {@code String}, {@code Long}, {@code BigInteger}, {@code Double}, {@code byte[]},
 * {@code List}, {@code Map} and {@link Tensor}, nested.
 *
 * <p>Stateless and thread-safe.
 */
final class ObjectCells {
  private ObjectCells() {}

  /**
   * Makes the stored form of a value.
   *
   * @param value the caller's value (not changed, not retained)
   * @param allocator where copies of nested tensors are allocated
   * @param owned receives every tensor allocated, so that the caller can free them
   * @param where names the cell in error messages
   * @return an immutable deep copy
   * @throws TqException with {@code INVALID_ARGUMENT} naming the type of an unsupported value
   */
  static Object freeze(Object value, BufferAllocator allocator, List<Tensor> owned, String where) {
    return switch (value) {
      case null -> null;
      case Boolean b -> b;
      case String s -> s;
      case Long l -> l;
      case BigInteger b -> b;
      case Double d -> d;
      case byte[] bytes -> new FrozenBytes(bytes.clone());
      case Tensor tensor -> ownedCopy(tensor, allocator, owned);
      case List<?> list -> {
        List<Object> copy = new ArrayList<>(list.size());
        for (Object item : list) {
          copy.add(freeze(item, allocator, owned, where));
        }
        yield Collections.unmodifiableList(copy);
      }
      case Map<?, ?> map -> {
        Map<Object, Object> copy = LinkedHashMap.newLinkedHashMap(map.size());
        for (Map.Entry<?, ?> e : map.entrySet()) {
          copy.put(
              freeze(e.getKey(), allocator, owned, where),
              freeze(e.getValue(), allocator, owned, where));
        }
        yield Collections.unmodifiableMap(copy);
      }
      default ->
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              where
                  + ": object value of type "
                  + value.getClass().getName()
                  + " is not supported (null, Boolean, String, Long, BigInteger, Double, byte[],"
                  + " List, Map, Tensor)");
    };
  }

  /**
   * Makes a reader's copy of a stored value.
   *
   * @param frozen a value returned by {@link #freeze}
   * @param allocator where copies of nested tensors are allocated
   * @param owned receives every tensor allocated, so that the caller can free them on failure
   * @return a writable deep copy the reader owns
   */
  static Object thaw(Object frozen, BufferAllocator allocator, List<Tensor> owned) {
    return switch (frozen) {
      case FrozenBytes bytes -> bytes.bytes().clone();
      case Tensor tensor -> ownedCopy(tensor, allocator, owned);
      case List<?> list -> {
        List<Object> copy = new ArrayList<>(list.size());
        for (Object item : list) {
          copy.add(thaw(item, allocator, owned));
        }
        yield copy;
      }
      case Map<?, ?> map -> {
        Map<Object, Object> copy = LinkedHashMap.newLinkedHashMap(map.size());
        for (Map.Entry<?, ?> e : map.entrySet()) {
          copy.put(thaw(e.getKey(), allocator, owned), thaw(e.getValue(), allocator, owned));
        }
        yield copy;
      }
      case null -> null;
      default -> frozen;
    };
  }

  /**
   * The stored form of a value with every internal wrapper removed, for encoders that only read:
   * byte strings are the stored arrays themselves and tensors the stored tensors, so the result
   * must not be modified or kept.
   *
   * @param frozen a value returned by {@link #freeze}
   * @return a read-only view in the plain value types
   */
  static Object plain(Object frozen) {
    return switch (frozen) {
      case FrozenBytes bytes -> bytes.bytes();
      case List<?> list -> {
        List<Object> out = new ArrayList<>(list.size());
        list.forEach(item -> out.add(plain(item)));
        yield out;
      }
      case Map<?, ?> map -> {
        Map<Object, Object> out = LinkedHashMap.newLinkedHashMap(map.size());
        map.forEach((k, v) -> out.put(plain(k), plain(v)));
        yield out;
      }
      case null -> null;
      default -> frozen;
    };
  }

  /** A byte string that no one can change: the stored form of a {@code byte[]} value. */
  private record FrozenBytes(byte[] bytes) {}

  /** Copies a tensor and records the copy in {@code owned}, so that a failure can free it. */
  private static Tensor ownedCopy(Tensor tensor, BufferAllocator allocator, List<Tensor> owned) {
    Tensor copy = Tensor.copyOf(allocator, tensor);
    owned.add(copy);
    return copy;
  }
}
