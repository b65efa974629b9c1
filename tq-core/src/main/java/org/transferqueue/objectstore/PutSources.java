package org.transferqueue.objectstore;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import org.transferqueue.tensor.MemoryRegion;
import org.transferqueue.tensor.TensorUtils;

/**
 * The registered sources of one put slice: the caller's segments themselves wherever they can be
 * registered, a pooled staging copy only where they cannot (heap memory, or memory that partly
 * overlaps a region registered by someone else).
 *
 * <p>Registration: the segments are merged into clusters of overlapping or adjacent segments
 * ({@link TensorUtils#mergeContiguousMemory}, overlaps and duplicates included). A registration
 * must be one segment (a region cannot be built from bare addresses without restricted methods).
 * When one segment spans its whole cluster (duplicates, views inside a tensor) only that segment is
 * registered; otherwise each segment not inside an earlier one is registered. Segments inside a
 * region that is already registered (a pooled buffer, a concurrent put of the same tensor) only add
 * a reference.
 *
 * <p>Owned by one worker task; {@link #close()} releases the registrations and the staging buffer.
 */
final class PutSources implements AutoCloseable {
  private final RegionRegistry registry;
  private final List<RegionRegistry.Region> regions = new ArrayList<>();
  private final MemorySegment[] sources;
  private RegisteredBufferPool.Lease staging;

  private PutSources(RegionRegistry registry, int count) {
    this.registry = registry;
    this.sources = new MemorySegment[count];
  }

  /**
   * Prepares registered sources for {@code segments}.
   *
   * @param segments non-empty segments to write
   * @param registry the client's registrations
   * @param pool where staging copies come from
   * @return the sources; the caller must close them after the transfer
   */
  static PutSources prepare(
      List<MemorySegment> segments, RegionRegistry registry, RegisteredBufferPool pool) {
    PutSources prepared = new PutSources(registry, segments.size());
    try {
      prepared.register(segments);
      prepared.stage(segments, pool);
      return prepared;
    } catch (RuntimeException e) {
      prepared.close();
      throw e;
    }
  }

  /**
   * The source of segment {@code i}: the segment itself or its staged copy.
   *
   * @param i the index in the prepared list
   * @return a registered segment with the same bytes
   */
  MemorySegment source(int i) {
    return sources[i];
  }

  /**
   * Every source, in the prepared order.
   *
   * @return a fixed-size view of the sources
   */
  List<MemorySegment> sources() {
    return Collections.unmodifiableList(Arrays.asList(sources));
  }

  /**
   * How many bytes had to be staged.
   *
   * @return staged bytes
   */
  long stagedBytes() {
    return staging == null ? 0 : staging.segment().byteSize();
  }

  private void register(List<MemorySegment> segments) {
    if (insideRegistrations(segments)) {
      return;
    }
    List<Integer> natives = new ArrayList<>();
    for (int i = 0; i < segments.size(); i++) {
      if (segments.get(i).isNative()) {
        natives.add(i);
      }
    }
    long[] addresses = natives.stream().mapToLong(i -> segments.get(i).address()).toArray();
    long[] sizes = natives.stream().mapToLong(i -> segments.get(i).byteSize()).toArray();
    List<MemoryRegion> clusters = TensorUtils.mergeContiguousMemory(addresses, sizes);
    // Segments sorted by address, then longest first, so that a cluster's members are contiguous
    // in this order and a segment spanning its cluster comes first.
    Integer[] order = natives.toArray(Integer[]::new);
    Arrays.sort(
        order,
        Comparator.<Integer>comparingLong(i -> segments.get(i).address())
            .thenComparing(i -> -segments.get(i).byteSize()));
    int from = 0;
    for (MemoryRegion cluster : clusters) {
      int to = from;
      while (to < order.length && segments.get(order[to]).address() < cluster.end()) {
        to++;
      }
      registerCluster(segments, order, from, Math.max(to, from + 1), cluster.end());
      from = Math.max(to, from + 1);
    }
  }

  /**
   * The common case of a put of rows of columns that the caller registered for the call: when every
   * segment is native and lies inside an already registered region, one reference per such region
   * covers them, without clustering (which costs objects per segment). Segments of one column come
   * in a row, so each region is looked up once.
   */
  private boolean insideRegistrations(List<MemorySegment> segments) {
    if (segments.isEmpty()) {
      return false;
    }
    RegionRegistry.Region holder = null;
    for (MemorySegment segment : segments) {
      if (!segment.isNative()) {
        releaseRegions();
        return false;
      }
      long start = segment.address();
      long end = end(segment);
      if (holder == null || start < holder.start || end > holder.end) {
        holder = registry.acquireContaining(start, end);
        if (holder == null) {
          releaseRegions();
          return false;
        }
        regions.add(holder);
      }
    }
    for (int i = 0; i < sources.length; i++) {
      sources[i] = segments.get(i);
    }
    return true;
  }

  private void releaseRegions() {
    for (int i = regions.size() - 1; i >= 0; i--) {
      registry.release(regions.get(i));
    }
    regions.clear();
  }

  private void registerCluster(
      List<MemorySegment> segments, Integer[] order, int from, int to, long clusterEnd) {
    MemorySegment first = segments.get(order[from]);
    if (end(first) == clusterEnd) {
      // Sorted by address, then longest first: the first segment spans the cluster.
      RegionRegistry.Region region = registry.acquire(first);
      if (region != null) {
        regions.add(region);
        for (int k = from; k < to; k++) {
          sources[order[k]] = segments.get(order[k]);
        }
      }
      return;
    }
    // Members of a registered allocation (the caller registered the column they were sliced from):
    // one reference covers them all.
    RegionRegistry.Region holder = registry.acquireContaining(first.address(), clusterEnd);
    if (holder != null) {
      regions.add(holder);
      for (int k = from; k < to; k++) {
        sources[order[k]] = segments.get(order[k]);
      }
      return;
    }
    long coveredEnd = Long.MIN_VALUE;
    for (int k = from; k < to; k++) {
      MemorySegment segment = segments.get(order[k]);
      if (end(segment) <= coveredEnd) {
        sources[order[k]] = segment;
        continue;
      }
      if (segment.address() < coveredEnd) {
        continue; // partly overlaps the previous registration: staged
      }
      RegionRegistry.Region region = registry.acquire(segment);
      if (region != null) {
        regions.add(region);
        sources[order[k]] = segment;
        coveredEnd = end(segment);
      }
    }
  }

  private void stage(List<MemorySegment> segments, RegisteredBufferPool pool) {
    long total = 0;
    for (int i = 0; i < sources.length; i++) {
      if (sources[i] == null) {
        total += segments.get(i).byteSize();
      }
    }
    if (total == 0) {
      return;
    }
    staging = pool.acquire(total);
    long offset = 0;
    for (int i = 0; i < sources.length; i++) {
      if (sources[i] == null) {
        long size = segments.get(i).byteSize();
        MemorySegment slot = staging.segment().asSlice(offset, size);
        MemorySegment.copy(segments.get(i), 0, slot, 0, size);
        sources[i] = slot;
        offset += size;
      }
    }
  }

  private static long end(MemorySegment segment) {
    return segment.address() + segment.byteSize();
  }

  /** Releases the registrations and the staging buffer. */
  @Override
  public void close() {
    try {
      for (int i = regions.size() - 1; i >= 0; i--) {
        registry.release(regions.get(i));
      }
      regions.clear();
    } finally {
      if (staging != null) {
        staging.close();
        staging = null;
      }
    }
  }
}
