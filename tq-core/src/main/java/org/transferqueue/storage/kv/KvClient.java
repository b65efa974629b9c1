package org.transferqueue.storage.kv;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
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
   * Stores values as {@link #put(List, List, List)}, told which allocations the tensor values lie
   * in. The default ignores {@code regions}; a client that registers memory for transfers may
   * register each region once for the call instead of each value.
   *
   * @param keys distinct keys
   * @param values one value per key; a {@link KvCellKind#TENSOR} value is a {@link Tensor}
   * @param kinds how each value is stored
   * @param regions the allocations the tensor values lie in (a value outside them is still stored);
   *     the caller owns them and keeps them valid for the call
   * @return as {@link #put(List, List, List)}
   * @throws org.transferqueue.TqException as {@link #put(List, List, List)}
   */
  default List<Map<String, Object>> put(
      List<String> keys, List<?> values, List<KvCellKind> kinds, List<MemorySegment> regions) {
    return put(keys, values, kinds);
  }

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
   * Reads tensor cells straight into memory the caller allocated from the expected shapes, one copy
   * from the store into the destination. The default reads with {@link #get} and copies each value
   * over; a client that can transfer into caller memory overrides it.
   *
   * @param keys the keys of tensor cells
   * @param shapes per key, the expected shape
   * @param dtypes per key, the expected dtype (never {@code null})
   * @param backendMeta per key, the metadata {@link #put} returned, or {@code null}
   * @param destinations per key, a segment of exactly the expected byte count; the caller owns them
   * @param regions the allocations the destinations lie in, which a client may register for the
   *     duration of the call
   * @throws org.transferqueue.TqException as {@link #get}; {@code SHAPE_MISMATCH} when a
   *     destination does not have the expected size. The destinations' contents are unspecified
   *     after a failure.
   */
  default void getInto(
      List<String> keys,
      List<long[]> shapes,
      List<DType> dtypes,
      List<Map<String, Object>> backendMeta,
      List<MemorySegment> destinations,
      List<MemorySegment> regions) {
    if (destinations.size() != keys.size()) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          destinations.size() + " destinations for " + keys.size() + " keys");
    }
    try (KvValues read = get(keys, shapes, dtypes, backendMeta)) {
      for (int i = 0; i < keys.size(); i++) {
        if (!(read.values().get(i) instanceof Tensor value)) {
          throw new TqException(
              ErrorCode.CORRUPT_DATA, "key '" + keys.get(i) + "' did not hold a tensor");
        }
        MemorySegment destination = destinations.get(i);
        if (value.nbytes() != destination.byteSize()) {
          throw new TqException(
              ErrorCode.SHAPE_MISMATCH,
              "key '"
                  + keys.get(i)
                  + "' holds "
                  + value.nbytes()
                  + " bytes, its destination has "
                  + destination.byteSize());
        }
        MemorySegment.copy(value.segment(), 0, destination, 0, destination.byteSize());
      }
    }
  }

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

  /**
   * Saves every stored key into the checkpoint directory (see {@link
   * org.transferqueue.storage.StorageManager#saveCheckpoint(Path, CheckpointDigests)}).
   *
   * @param directory the checkpoint directory, as every storage process sees it
   * @param digests receives the digests of the written files
   * @throws org.transferqueue.StorageException {@code UNSUPPORTED_OPERATION} (the default) if the
   *     store has no checkpoints, {@code STORAGE_ERROR} if saving failed
   */
  default void saveCheckpoint(Path directory, CheckpointDigests digests) {
    throw new StorageException(
        ErrorCode.UNSUPPORTED_OPERATION,
        getClass().getSimpleName() + " does not support checkpoint");
  }

  /**
   * Reads, verifies and stages a checkpoint saved by {@link #saveCheckpoint}, changing nothing
   * until the commit, which replaces every stored key.
   *
   * @param directory the checkpoint directory
   * @param digests the manifest's digests
   * @return the staged load
   * @throws org.transferqueue.StorageException {@code UNSUPPORTED_OPERATION} (the default); {@code
   *     NOT_FOUND}, {@code INVALID_ARGUMENT} or {@code CORRUPT_DATA} for a missing, foreign or
   *     corrupt checkpoint, stored keys unchanged
   */
  default StorageManager.PreparedLoad prepareLoadCheckpoint(
      Path directory, CheckpointDigests digests) {
    throw new StorageException(
        ErrorCode.UNSUPPORTED_OPERATION,
        getClass().getSimpleName() + " does not support checkpoint");
  }

  /** Stops the client's threads and frees its memory. Idempotent. */
  @Override
  void close();
}
