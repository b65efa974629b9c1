package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.transferqueue.codec.PackedValueCodec;
import org.transferqueue.storage.kv.KvCellValues;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.tensor.TensorUtils;

/**
 * The work of one slice of a {@link MooncakeKvClient} put or get: prepare registered memory,
 * transfer with retries ({@link TransferRetrier}), release the memory. Each method runs on a worker
 * and returns a future that completes once the slice's transfer and clean-up are done.
 *
 * <p>Thread-safe: no state of its own; the shared parts (registry, pool, retrier) are thread-safe.
 */
final class SliceTransfers {
  private static final long VIEW_ALIGNMENT = TensorUtils.GROUP_ALIGNMENT_BYTES;

  private final ObjectStore store;
  private final ReplicateConfig replicateConfig;
  private final RegionRegistry registry;
  private final RegisteredBufferPool pool;
  private final TransferRetrier retrier;

  SliceTransfers(
      ObjectStore store,
      ReplicateConfig replicateConfig,
      RegionRegistry registry,
      RegisteredBufferPool pool,
      TransferRetrier retrier) {
    this.store = store;
    this.replicateConfig = replicateConfig;
    this.registry = registry;
    this.pool = pool;
    this.retrier = retrier;
  }

  /**
   * Writes the tensor cells {@code order[from..to)} of a put; a {@link KvCellValues} gives their
   * bytes without a tensor view per cell.
   */
  CompletableFuture<Void> putTensors(
      int[] order, int from, int to, List<String> keys, List<?> values, long deadline) {
    KvCellValues cells = values instanceof KvCellValues c ? c : null;
    List<String> sliceKeys = new ArrayList<>(to - from);
    List<MemorySegment> segments = new ArrayList<>(to - from);
    for (int j = from; j < to; j++) {
      int i = order[j];
      MemorySegment segment =
          cells != null ? cells.tensorBytes(i) : ((Tensor) values.get(i)).segment();
      if (segment.byteSize() > 0) {
        sliceKeys.add(keys.get(i));
        segments.add(segment);
      }
    }
    PutSources sources = PutSources.prepare(segments, registry, pool);
    List<MemorySegment> registered = sources.sources();
    return retrier
        .run("batch_upsert_from", sliceKeys, registered, null, this::upsert, deadline)
        .whenComplete((v, e) -> sources.close());
  }

  CompletableFuture<Void> putObjects(
      List<Integer> slice, List<String> keys, List<?> values, long[] packedSizes, long deadline) {
    List<String> sliceKeys = new ArrayList<>(slice.size());
    List<Object> sliceValues = new ArrayList<>(slice.size());
    for (int i : slice) {
      sliceKeys.add(keys.get(i));
      sliceValues.add(values.get(i));
    }
    RegisteredBufferPool.Lease[] lease = new RegisteredBufferPool.Lease[1];
    List<MemorySegment> packed;
    try {
      packed =
          PackedValueCodec.batchEncodeInto(
              sliceValues,
              sizes -> {
                lease[0] = pool.acquire(Math.max(1, Arrays.stream(sizes).sum()));
                return carve(lease[0].segment(), sizes, 1);
              });
    } catch (RuntimeException e) {
      if (lease[0] != null) {
        lease[0].close();
      }
      throw e;
    }
    for (int j = 0; j < slice.size(); j++) {
      packedSizes[slice.get(j)] = packed.get(j).byteSize();
    }
    return retrier
        .run("batch_upsert_from", sliceKeys, packed, null, this::upsert, deadline)
        .whenComplete((v, e) -> lease[0].close());
  }

  private long[] upsert(List<String> keys, List<MemorySegment> sources) {
    int[] codes = store.batchUpsertFrom(keys, sources, replicateConfig);
    long[] widened = new long[codes.length];
    for (int i = 0; i < codes.length; i++) {
      widened[i] = codes[i];
    }
    return widened;
  }

  private static List<MemorySegment> carve(MemorySegment region, long[] sizes, long alignment) {
    List<MemorySegment> slots = new ArrayList<>(sizes.length);
    long offset = 0;
    for (long size : sizes) {
      offset = (offset + alignment - 1) & -alignment;
      slots.add(region.asSlice(offset, size));
      offset += size;
    }
    return slots;
  }

  CompletableFuture<Void> getTensors(
      GetPlan plan,
      List<Integer> slice,
      Object[] results,
      List<AutoCloseable> owned,
      long deadline) {
    Map<DType, Long> groupBytes = new LinkedHashMap<>();
    long[] offsets = new long[slice.size()];
    for (int j = 0; j < slice.size(); j++) {
      int i = slice.get(j);
      long start = align(groupBytes.getOrDefault(plan.dtype(i), 0L));
      offsets[j] = start;
      groupBytes.put(plan.dtype(i), start + plan.nbytes(i));
    }
    Map<DType, RegisteredBufferPool.Lease> regions = new LinkedHashMap<>();
    GetPlan.Transfers transfers = new GetPlan.Transfers(slice.size());
    try {
      for (Map.Entry<DType, Long> group : groupBytes.entrySet()) {
        if (group.getValue() > 0) {
          regions.put(group.getKey(), pool.acquire(group.getValue()));
        }
      }
      Tensor[] views = new Tensor[slice.size()];
      for (int j = 0; j < slice.size(); j++) {
        int i = slice.get(j);
        RegisteredBufferPool.Lease region = regions.get(plan.dtype(i));
        MemorySegment view =
            region == null
                ? MemorySegment.NULL
                : region.segment().asSlice(offsets[j], plan.nbytes(i));
        views[j] = Tensor.wrap(plan.dtype(i), view, plan.shape(i));
        plan.addTransfers(i, view, transfers);
      }
      return retrier
          .run(
              "batch_get_into",
              transfers.keys,
              transfers.destinations,
              transfers.sizes(),
              this::getInto,
              deadline)
          .whenComplete(
              (v, e) -> {
                if (e != null) {
                  regions.values().forEach(RegisteredBufferPool.Lease::close);
                  return;
                }
                owned.addAll(regions.values());
                for (int j = 0; j < slice.size(); j++) {
                  results[slice.get(j)] = views[j];
                }
              });
    } catch (RuntimeException e) {
      regions.values().forEach(RegisteredBufferPool.Lease::close);
      throw e;
    }
  }

  /**
   * Reads the tensor cells {@code from..to} of the plan (in its tensor order) straight into the
   * caller's registered destinations.
   */
  CompletableFuture<Void> getTensorsInto(
      GetPlan plan, int from, int to, List<MemorySegment> destinations, long deadline) {
    GetPlan.Transfers transfers = new GetPlan.Transfers(to - from);
    for (int j = from; j < to; j++) {
      int i = plan.tensorIndex(j);
      plan.addTransfers(i, destinations.get(i), transfers);
    }
    if (transfers.isEmpty()) {
      return CompletableFuture.completedFuture(null);
    }
    return retrier.run(
        "batch_get_into",
        transfers.keys,
        transfers.destinations,
        transfers.sizes(),
        this::getInto,
        deadline);
  }

  CompletableFuture<Void> getObjects(
      GetPlan plan,
      List<Integer> slice,
      Object[] results,
      List<AutoCloseable> owned,
      long deadline) {
    List<String> sliceKeys = new ArrayList<>(slice.size());
    long[] sizes = new long[slice.size()];
    for (int j = 0; j < slice.size(); j++) {
      sliceKeys.add(plan.key(slice.get(j)));
      sizes[j] = plan.packedSize(slice.get(j));
    }
    RegisteredBufferPool.Lease lease = pool.acquire(Arrays.stream(sizes).sum());
    List<MemorySegment> slots = carve(lease.segment(), sizes, 1);
    return retrier
        .run("batch_get_into", sliceKeys, slots, sizes, this::getInto, deadline)
        .thenRun(
            () -> {
              List<Object> decoded = PackedValueCodec.batchDecodeFrom(slots, sliceKeys);
              for (int j = 0; j < slice.size(); j++) {
                results[slice.get(j)] = decoded.get(j);
              }
              owned.add(lease);
            })
        .whenComplete(
            (v, e) -> {
              if (e != null) {
                lease.close();
              }
            });
  }

  private long[] getInto(List<String> keys, List<MemorySegment> destinations) {
    return store.batchGetInto(keys, destinations);
  }

  private static long align(long offset) {
    return (offset + VIEW_ALIGNMENT - 1) & -VIEW_ALIGNMENT;
  }
}
