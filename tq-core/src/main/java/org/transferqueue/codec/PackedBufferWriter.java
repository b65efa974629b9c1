package org.transferqueue.codec;

import static org.transferqueue.codec.PackedBufferDescriptor.ENTRY_LENGTH;
import static org.transferqueue.codec.PackedBufferDescriptor.ENTRY_SIZE_OFFSET;
import static org.transferqueue.codec.PackedBufferDescriptor.INT_HANDLE;
import static org.transferqueue.codec.PackedBufferDescriptor.ITEM_COUNT_OFFSET;
import static org.transferqueue.codec.PackedBufferDescriptor.TABLE_OFFSET;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Writes items into the packed-buffer layout of {@link PackedBufferDescriptor}.
 *
 * <p>Stateless and thread-safe. Each payload byte is copied once, from the item's segment straight
 * into the target; nothing passes through the heap unless the items are heap segments.
 */
public final class PackedBufferWriter {
  private PackedBufferWriter() {}

  /**
   * The packed length of these items.
   *
   * @param items the payloads
   * @return {@code 4 + 8n + sum of sizes}
   * @throws TqException with {@code INVALID_ARGUMENT} if an item or the whole is too large for the
   *     u32 fields
   */
  public static long packedSize(List<MemorySegment> items) {
    long[] sizes = new long[items.size()];
    for (int i = 0; i < sizes.length; i++) {
      sizes[i] = items.get(i).byteSize();
    }
    return PackedBufferDescriptor.packedSize(sizes);
  }

  /**
   * Packs items into the start of a target segment; bytes of the target past the packed length are
   * not touched.
   *
   * @param target where to write; may be larger than needed; the caller keeps ownership
   * @param items the payloads, in order
   * @return the packed length written
   * @throws TqException with {@code INVALID_ARGUMENT} "pack_into: target buffer has X bytes,
   *     requires Y" if the target is too small (nothing is written then), or if an item is too
   *     large for the format
   */
  public static long packInto(MemorySegment target, List<MemorySegment> items) {
    long[] sizes = new long[items.size()];
    for (int i = 0; i < sizes.length; i++) {
      sizes[i] = items.get(i).byteSize();
    }
    long packedSize = writeTable(target, sizes);
    long payload = PackedBufferDescriptor.payloadOffset(sizes.length);
    for (int i = 0; i < sizes.length; i++) {
      MemorySegment.copy(items.get(i), 0, target, payload, sizes[i]);
      payload += sizes[i];
    }
    return packedSize;
  }

  /**
   * Checks that items of these sizes fit {@code target} and writes the item count and table; the
   * payloads, back to back from {@link PackedBufferDescriptor#payloadOffset}, are the caller's.
   *
   * @return the packed length
   * @throws TqException as {@link #packInto}; nothing is written then
   */
  static long writeTable(MemorySegment target, long[] sizes) {
    Objects.requireNonNull(target, "target");
    long packedSize = PackedBufferDescriptor.packedSize(sizes);
    if (target.byteSize() < packedSize) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "pack_into: target buffer has " + target.byteSize() + " bytes, requires " + packedSize);
    }
    int count = sizes.length;
    INT_HANDLE.set(target, (long) ITEM_COUNT_OFFSET, count);
    long payload = PackedBufferDescriptor.payloadOffset(count);
    for (int i = 0; i < count; i++) {
      long entry = TABLE_OFFSET + (long) ENTRY_LENGTH * i;
      INT_HANDLE.set(target, entry, (int) payload);
      INT_HANDLE.set(target, entry + ENTRY_SIZE_OFFSET, (int) sizes[i]);
      payload += sizes[i];
    }
    return packedSize;
  }
}
