package org.transferqueue.storage.kv;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * A client of one key-value store, as used by {@link KvStorageManager}: puts, gets and clears of
 * keys, each key holding one cell.
 *
 * <p>Per-key <em>backend metadata</em> is what the client needs later to read or remove a key (for
 * example the packed size of an object value). {@link #put} returns it aligned with the keys; the
 * storage manager sends it to the controller, which hands it back, aligned with the keys, to {@link
 * #get} and {@link #clear}.
 *
 * <p>Implementations are thread-safe and own their threads; {@link #close()} stops them.
 */
public interface KvClient extends AutoCloseable {

  /**
   * Stores {@code values[i]} under {@code keys[i]}, replacing any value already stored (upsert).
   *
   * @param keys distinct keys
   * @param values one value per key; a {@link KvCellKind#TENSOR} value is a {@link Tensor}
   * @param kinds how each value is stored
   * @return the backend metadata of each key ({@code null} entries where there is none), or {@code
   *     null} when the backend records none at all; when not null its size equals the key count
   * @throws org.transferqueue.TqException with {@code INVALID_ARGUMENT} when the lists differ in
   *     length ("Number of keys must match number of values") or a tensor cell is not a tensor;
   *     {@code STORAGE_ERROR} naming the key and the store's code when a key cannot be written
   */
  List<Map<String, Object>> put(List<String> keys, List<?> values, List<KvCellKind> kinds);

  /**
   * Stores values, choosing the kind of each from its runtime type: a {@link Tensor} is a tensor
   * cell, anything else an object cell.
   *
   * @param keys distinct keys
   * @param values one value per key
   * @return as {@link #put(List, List, List)}
   */
  default List<Map<String, Object>> put(List<String> keys, List<?> values) {
    List<KvCellKind> kinds = new ArrayList<>(values.size());
    for (Object value : values) {
      kinds.add(value instanceof Tensor ? KvCellKind.TENSOR : KvCellKind.OBJECT);
    }
    return put(keys, values, kinds);
  }

  /**
   * Reads the values of {@code keys}.
   *
   * @param keys the keys
   * @param shapes per key, the expected tensor shape ({@code null} for an object cell)
   * @param dtypes per key, the expected dtype; {@code null} marks an object cell
   * @param backendMeta per key, the metadata {@link #put} returned ({@code null} entries where
   *     none), or {@code null} when none is known for any key
   * @return the values in key order: tensors of exactly the expected dtype and shape, object values
   *     as stored; the caller owns the result and must close it
   * @throws org.transferqueue.TqException with {@code INVALID_ARGUMENT} for lists of different
   *     lengths or missing metadata; {@code STORAGE_ERROR} or {@code CORRUPT_DATA} naming the key
   *     when a key cannot be read or holds a different number of bytes than expected
   */
  KvValues get(
      List<String> keys,
      List<long[]> shapes,
      List<DType> dtypes,
      List<Map<String, Object>> backendMeta);

  /**
   * Removes keys. Absent keys are not an error, and no failure is thrown: failures are returned so
   * that the caller keeps the metadata of what may still be stored.
   *
   * @param keys the keys
   * @param backendMeta per key, the metadata {@link #put} returned, or {@code null}
   * @return the keys that could not be removed, with the store's code, in key order; empty when all
   *     were removed or absent
   */
  Map<String, Integer> clear(List<String> keys, List<Map<String, Object>> backendMeta);

  /** Stops the client's threads and frees its memory. Idempotent. */
  @Override
  void close();
}
