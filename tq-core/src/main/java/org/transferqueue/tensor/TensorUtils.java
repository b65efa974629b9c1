package org.transferqueue.tensor;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;

/**
 * Shape arithmetic and the helpers that prepare zero-copy transfers: strides, byte counts, grouped
 * allocation (one region per dtype) and merging of memory regions before registration.
 *
 * <p>Stateless and thread-safe.
 */
public final class TensorUtils {
  /** Alignment of each view made by {@link #allocateGrouped(BufferAllocator, List, List)}. */
  public static final long GROUP_ALIGNMENT_BYTES = 64;

  private TensorUtils() {}

  /**
   * The number of elements of a shape: the product of its dimensions, 1 for the empty shape.
   *
   * @param shape the dimensions
   * @return the element count
   * @throws TqException with {@code INVALID_ARGUMENT} for a negative dimension or a product that
   *     overflows a long
   */
  public static long numel(long... shape) {
    long product = 1;
    for (int i = 0; i < shape.length; i++) {
      if (shape[i] < 0) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "negative dimension "
                + shape[i]
                + " at index "
                + i
                + " of shape "
                + Arrays.toString(shape));
      }
      try {
        product = Math.multiplyExact(product, shape[i]);
      } catch (ArithmeticException e) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "shape " + Arrays.toString(shape) + " overflows numel", e);
      }
    }
    return product;
  }

  /**
   * The byte count of a tensor: {@code dtype.byteSize() * numel(shape)}.
   *
   * @param dtype the element type
   * @param shape the dimensions
   * @return the byte count
   * @throws TqException with {@code INVALID_ARGUMENT} for a negative dimension or a byte count that
   *     overflows a long
   */
  public static long nbytes(DType dtype, long... shape) {
    long numel = numel(shape);
    try {
      return Math.multiplyExact(numel, (long) dtype.byteSize());
    } catch (ArithmeticException e) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "shape " + Arrays.toString(shape) + " of " + dtype + " overflows nbytes",
          e);
    }
  }

  /**
   * Byte counts of several tensors (upstream {@code get_nbytes}).
   *
   * @param dtypes one dtype per tensor
   * @param shapes one shape per tensor
   * @return one byte count per tensor
   * @throws TqException with {@code INVALID_ARGUMENT} if the lists differ in length or a shape is
   *     bad
   */
  public static long[] nbytes(List<DType> dtypes, List<long[]> shapes) {
    checkSameSize(dtypes, shapes);
    long[] out = new long[dtypes.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = nbytes(dtypes.get(i), shapes.get(i));
    }
    return out;
  }

  /**
   * Contiguous row-major strides in elements (upstream {@code compute_stride}): {@code (2,3,4) ->
   * (12,4,1)}, {@code () -> ()}.
   *
   * @param shape the dimensions
   * @return one stride per dimension
   * @throws TqException with {@code INVALID_ARGUMENT} for a negative or overflowing shape
   */
  public static long[] computeStride(long... shape) {
    numel(shape);
    long[] stride = new long[shape.length];
    long running = 1;
    for (int i = shape.length - 1; i >= 0; i--) {
      stride[i] = running;
      running *= shape[i];
    }
    return stride;
  }

  /**
   * Allocates empty tensors grouped by dtype, each view aligned to {@link #GROUP_ALIGNMENT_BYTES}.
   *
   * @param allocator where the regions come from
   * @param dtypes one dtype per tensor
   * @param shapes one shape per tensor
   * @return the views and their regions; the caller owns it and must close it
   * @throws TqException as {@link #allocateGrouped(BufferAllocator, List, List, long)}
   */
  public static GroupedAllocation allocateGrouped(
      BufferAllocator allocator, List<DType> dtypes, List<long[]> shapes) {
    return allocateGrouped(allocator, dtypes, shapes, GROUP_ALIGNMENT_BYTES);
  }

  /**
   * Allocates empty tensors grouped by dtype (upstream {@code allocate_empty_tensors}): one
   * contiguous region per dtype, in order of the dtype's first appearance, holding that dtype's
   * tensors in request order, each starting at a multiple of {@code alignmentBytes} from the
   * region's start (an alignment of 1 packs them without padding, exactly as upstream). The
   * contents are unspecified.
   *
   * @param allocator where the regions come from
   * @param dtypes one dtype per tensor
   * @param shapes one shape per tensor
   * @param alignmentBytes a power of two from 1 to {@link BufferAllocator#ALIGNMENT_BYTES}
   * @return the views and their regions; the caller owns it and must close it
   * @throws TqException with {@code INVALID_ARGUMENT} if the lists differ in length, a shape is bad
   *     or the alignment is not allowed; {@code OUT_OF_MEMORY} if the regions do not fit (then
   *     nothing stays allocated)
   */
  public static GroupedAllocation allocateGrouped(
      BufferAllocator allocator, List<DType> dtypes, List<long[]> shapes, long alignmentBytes) {
    Objects.requireNonNull(allocator, "allocator");
    checkSameSize(dtypes, shapes);
    if (Long.bitCount(alignmentBytes) != 1 || alignmentBytes > BufferAllocator.ALIGNMENT_BYTES) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "alignmentBytes="
              + alignmentBytes
              + " must be a power of two <= "
              + BufferAllocator.ALIGNMENT_BYTES);
    }
    int count = dtypes.size();
    long[] offsets = new long[count];
    long[] sizes = new long[count];
    Map<DType, Long> regionBytes = new LinkedHashMap<>();
    for (int i = 0; i < count; i++) {
      DType dtype = Objects.requireNonNull(dtypes.get(i), "dtypes[" + i + "]");
      sizes[i] = nbytes(dtype, shapes.get(i));
      long start = alignUp(regionBytes.getOrDefault(dtype, 0L), alignmentBytes);
      offsets[i] = start;
      regionBytes.put(dtype, Math.addExact(start, sizes[i]));
    }
    List<DType> regionDtypes = new ArrayList<>(regionBytes.keySet());
    List<NativeBuffer> buffers = new ArrayList<>(regionDtypes.size());
    try {
      for (DType dtype : regionDtypes) {
        buffers.add(allocator.allocate(regionBytes.get(dtype)));
      }
    } catch (RuntimeException e) {
      for (int i = buffers.size() - 1; i >= 0; i--) {
        buffers.get(i).close();
      }
      throw e;
    }
    List<MemorySegment> regions = buffers.stream().map(NativeBuffer::segment).toList();
    List<Tensor> tensors = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      MemorySegment region = regions.get(regionDtypes.indexOf(dtypes.get(i)));
      tensors.add(Tensor.wrap(dtypes.get(i), region.asSlice(offsets[i], sizes[i]), shapes.get(i)));
    }
    return new GroupedAllocation(tensors, regionDtypes, regions, buffers);
  }

  /**
   * Merges memory regions for registration (upstream {@code merge_contiguous_memory}, with the Java
   * rule for overlaps): regions are sorted by address, and a region that starts at or before the
   * end of the current one extends it to the larger end, so that adjacent, overlapping and
   * duplicate regions become one.
   *
   * @param addresses the start address of each region
   * @param sizes the length of each region in bytes
   * @return the merged regions, sorted by address
   * @throws TqException with {@code INVALID_ARGUMENT} "ptrs and sizes must have the same length" if
   *     the arrays differ in length, or for a negative size
   */
  public static List<MemoryRegion> mergeContiguousMemory(long[] addresses, long[] sizes) {
    if (addresses.length != sizes.length) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "ptrs and sizes must have the same length: "
              + addresses.length
              + " ptrs, "
              + sizes.length
              + " sizes");
    }
    List<MemoryRegion> regions = new ArrayList<>(addresses.length);
    for (int i = 0; i < addresses.length; i++) {
      regions.add(new MemoryRegion(addresses[i], sizes[i]));
    }
    return mergeContiguousMemory(regions);
  }

  /**
   * Merges memory regions as {@link #mergeContiguousMemory(long[], long[])} does.
   *
   * @param regions the regions, in any order
   * @return the merged regions, sorted by address
   */
  public static List<MemoryRegion> mergeContiguousMemory(List<MemoryRegion> regions) {
    List<MemoryRegion> sorted = new ArrayList<>(regions);
    sorted.sort(Comparator.comparingLong(MemoryRegion::address));
    List<MemoryRegion> merged = new ArrayList<>();
    MemoryRegion current = null;
    for (MemoryRegion next : sorted) {
      if (current == null) {
        current = next;
      } else if (next.address() <= current.end()) {
        long end = Math.max(current.end(), next.end());
        current = new MemoryRegion(current.address(), end - current.address());
      } else {
        merged.add(current);
        current = next;
      }
    }
    if (current != null) {
      merged.add(current);
    }
    return merged;
  }

  private static long alignUp(long value, long alignment) {
    return (value + alignment - 1) & -alignment;
  }

  private static void checkSameSize(List<DType> dtypes, List<long[]> shapes) {
    if (dtypes.size() != shapes.size()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "dtypes and shapes must have the same length: "
              + dtypes.size()
              + " dtypes, "
              + shapes.size()
              + " shapes");
    }
  }
}
