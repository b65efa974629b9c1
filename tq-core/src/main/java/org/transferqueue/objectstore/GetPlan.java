package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.TensorUtils;

/**
 * The validated arguments of one {@link MooncakeKvClient#get}: per key its kind, expected size and
 * recorded layout. Immutable after construction; used by the worker tasks of one call.
 */
final class GetPlan {
  private final List<String> keys;
  private final List<long[]> shapes;
  private final List<DType> dtypes;
  private final List<Map<String, Object>> backendMeta;
  private final long[] sizes;
  // Positions of tensor cells from the front, of object cells from the back, each in key order
  // once classified: no boxed index per key.
  private final int[] order;
  private int tensorCount;
  private int objectCount;

  private GetPlan(
      List<String> keys,
      List<long[]> shapes,
      List<DType> dtypes,
      List<Map<String, Object>> backendMeta) {
    this.keys = keys;
    this.shapes = shapes;
    this.dtypes = dtypes;
    this.backendMeta = backendMeta;
    this.sizes = new long[keys.size()];
    this.order = new int[keys.size()];
  }

  /**
   * Validates the arguments of a get.
   *
   * @return the plan
   * @throws TqException with {@code INVALID_ARGUMENT} naming what is missing or inconsistent
   */
  static GetPlan of(
      List<String> keys,
      List<long[]> shapes,
      List<DType> dtypes,
      List<Map<String, Object>> backendMeta) {
    if (shapes == null || dtypes == null) {
      throw invalid("MooncakeKvClient needs shapes and dtypes for zero-copy transfer.");
    }
    if (shapes.size() != keys.size() || dtypes.size() != keys.size()) {
      throw invalid(
          "Lengths of keys, shapes, dtypes must match: keys="
              + keys.size()
              + ", shapes="
              + shapes.size()
              + ", dtypes="
              + dtypes.size());
    }
    if (backendMeta != null && backendMeta.size() != keys.size()) {
      throw invalid(
          "custom_backend_meta has "
              + backendMeta.size()
              + " entries for "
              + keys.size()
              + " keys");
    }
    GetPlan plan = new GetPlan(keys, shapes, dtypes, backendMeta);
    for (int i = 0; i < keys.size(); i++) {
      plan.classify(i);
    }
    return plan;
  }

  private void classify(int i) {
    String key = keys.get(i);
    if (dtypes.get(i) == null) {
      if (backendMeta == null) {
        throw invalid(
            "custom_backend_meta is required when any dtype is None (for packed_size); key '"
                + key
                + "' is an object cell");
      }
      Map<String, Object> meta = backendMeta.get(i);
      Object packed = meta == null ? null : meta.get(MooncakeKvClient.PACKED_SIZE);
      if (!(packed instanceof Number size) || size.longValue() <= 0) {
        throw invalid("missing packed_size for key " + key + " (backend metadata " + meta + ")");
      }
      sizes[i] = size.longValue();
      order[order.length - ++objectCount] = i;
      return;
    }
    if (shapes.get(i) == null) {
      throw invalid("tensor key '" + key + "' (" + dtypes.get(i) + ") has no expected shape");
    }
    sizes[i] = TensorUtils.nbytes(dtypes.get(i), shapes.get(i));
    order[tensorCount++] = i;
  }

  List<Integer> tensorIndexes() {
    List<Integer> indexes = new ArrayList<>(tensorCount);
    for (int j = 0; j < tensorCount; j++) {
      indexes.add(order[j]);
    }
    return indexes;
  }

  List<Integer> objectIndexes() {
    List<Integer> indexes = new ArrayList<>(objectCount);
    for (int j = 0; j < objectCount; j++) {
      indexes.add(objectIndex(j));
    }
    return indexes;
  }

  /** The number of tensor cells. */
  int tensorCount() {
    return tensorCount;
  }

  /** The number of object cells. */
  int objectCount() {
    return objectCount;
  }

  /** The position of the {@code j}-th tensor cell, in key order. */
  int tensorIndex(int j) {
    return order[Objects.checkIndex(j, tensorCount)];
  }

  private int objectIndex(int j) {
    return order[order.length - 1 - Objects.checkIndex(j, objectCount)];
  }

  String key(int i) {
    return keys.get(i);
  }

  DType dtype(int i) {
    return dtypes.get(i);
  }

  long[] shape(int i) {
    return shapes.get(i);
  }

  long nbytes(int i) {
    return sizes[i];
  }

  long packedSize(int i) {
    return sizes[i];
  }

  /**
   * Adds the store reads that fill tensor key {@code i}: the key itself, or its chunk keys when the
   * metadata records chunks. Zero-byte tensors need no read.
   */
  void addTransfers(int i, MemorySegment destination, Transfers out) {
    String key = keys.get(i);
    Map<String, Object> meta = backendMeta == null ? null : backendMeta.get(i);
    int chunks = ChunkKeys.count(key, meta);
    long nbytes = sizes[i];
    if (chunks == 0) {
      if (nbytes > 0) {
        out.add(key, destination, nbytes);
      }
      return;
    }
    Object recorded = meta.get(MooncakeKvClient.CHUNK_BYTES);
    if (!(recorded instanceof Number chunkBytes)
        || chunkBytes.longValue() <= 0
        || (chunks - 1) * chunkBytes.longValue() >= nbytes
        || chunks * chunkBytes.longValue() < nbytes) {
      throw invalid(
          "chunk layout "
              + meta
              + " of key '"
              + key
              + "' does not describe its "
              + nbytes
              + " expected bytes (chunk_bytes is required with n_chunks)");
    }
    long chunk = chunkBytes.longValue();
    for (int c = 0; c < chunks; c++) {
      long offset = c * chunk;
      long length = Math.min(chunk, nbytes - offset);
      out.add(ChunkKeys.of(key, c), destination.asSlice(offset, length), length);
    }
  }

  /**
   * The transfers of one slice: store keys, their destinations and expected sizes, in order; the
   * sizes are primitive. Owned by one worker task.
   */
  static final class Transfers {
    final List<String> keys;
    final List<MemorySegment> destinations;
    private long[] sizes;
    private int count;

    Transfers(int expected) {
      keys = new ArrayList<>(expected);
      destinations = new ArrayList<>(expected);
      sizes = new long[expected];
    }

    void add(String key, MemorySegment destination, long size) {
      if (count == sizes.length) {
        sizes = Arrays.copyOf(sizes, Math.max(8, count * 2));
      }
      keys.add(key);
      destinations.add(destination);
      sizes[count++] = size;
    }

    boolean isEmpty() {
      return count == 0;
    }

    long[] sizes() {
      return count == sizes.length ? sizes : Arrays.copyOf(sizes, count);
    }
  }

  private static TqException invalid(String message) {
    return new TqException(ErrorCode.INVALID_ARGUMENT, message);
  }
}
