package org.transferqueue.tensor;

import java.lang.foreign.MemorySegment;
import java.util.List;
import org.transferqueue.TqException;
import org.transferqueue.memory.NativeBuffer;

/**
 * Tensors allocated together by {@link TensorUtils#allocateGrouped}: one native region per dtype,
 * in order of the dtype's first appearance, and one view per requested tensor inside its region.
 *
 * <p>The views own nothing; this object owns the regions and frees them on {@link #close()}, after
 * which the views must not be used. Not thread-safe for close.
 *
 * @param tensors one view per request, in request order
 * @param regionDtypes the dtype of each region, in order of first appearance
 * @param regions the used part of each region, from the first view's start to the last view's end;
 *     these are what a transfer engine registers
 * @param buffers the owned buffers behind the regions
 */
public record GroupedAllocation(
    List<Tensor> tensors,
    List<DType> regionDtypes,
    List<MemorySegment> regions,
    List<NativeBuffer> buffers)
    implements AutoCloseable {

  /**
   * Makes the lists unmodifiable.
   *
   * @param tensors the views
   * @param regionDtypes the dtypes
   * @param regions the regions
   * @param buffers the buffers
   */
  public GroupedAllocation {
    tensors = List.copyOf(tensors);
    regionDtypes = List.copyOf(regionDtypes);
    regions = List.copyOf(regions);
    buffers = List.copyOf(buffers);
  }

  /**
   * The address of each view, in request order (upstream's {@code ptrs}).
   *
   * @return one address per tensor
   */
  public long[] addresses() {
    return tensors.stream().mapToLong(t -> t.segment().address()).toArray();
  }

  /**
   * The address and length of each region, in region order (upstream's {@code regionPtrs} and
   * {@code regionSizes}).
   *
   * @return one region per dtype
   */
  public List<MemoryRegion> memoryRegions() {
    return regions.stream().map(r -> new MemoryRegion(r.address(), r.byteSize())).toList();
  }

  /** Frees every region, in reverse order of allocation; idempotent. */
  @Override
  public void close() {
    TqException failure = null;
    for (int i = buffers.size() - 1; i >= 0; i--) {
      try {
        buffers.get(i).close();
      } catch (TqException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
