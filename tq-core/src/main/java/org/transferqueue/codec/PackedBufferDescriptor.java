package org.transferqueue.codec;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Layout constants of the packed-buffer format: several frames (a value's msgpack main frame and
 * its aux frames) stored as one contiguous byte string under one key-value store key.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                       item count n  u32                       |  0
 *  +---------------------------------------------------------------+
 *  |                   payload offset 0  u32 (absolute)            |  4
 *  +---------------------------------------------------------------+
 *  |                   payload size 0    u32                       |  8
 *  +---------------------------------------------------------------+
 *  |                              ...                              |
 *  +---------------------------------------------------------------+
 *  |                   payload offset n-1, payload size n-1        |  4 + 8(n-1)
 *  +---------------------------------------------------------------+
 *  |     payload 0 | payload 1 | ... | payload n-1  (no padding) ... |  4 + 8n
 *  +---------------------------------------------------------------+
 * </pre>
 *
 * <p>All fields are little-endian. {@code packedSize = 4 + 8n + sum(size_i)}. Example: the string
 * {@code "hi"} (main frame {@code a2 68 69}) packs to {@code 01000000 0c000000 03000000 a26869}.
 */
public final class PackedBufferDescriptor {
  /** Byte offset of the item count. */
  public static final int ITEM_COUNT_OFFSET = 0;

  /** Byte offset of the first entry of the item table. */
  public static final int TABLE_OFFSET = 4;

  /** Bytes per item-table entry: offset u32 then size u32. */
  public static final int ENTRY_LENGTH = 8;

  /** Offset of the size within an entry. */
  public static final int ENTRY_SIZE_OFFSET = 4;

  /** Largest payload size and offset the u32 fields can express: 2^32 - 1. */
  public static final long MAX_U32 = 0xFFFF_FFFFL;

  static final ValueLayout.OfInt U32 =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /** (MemorySegment, long offset) -> int, little-endian. */
  static final VarHandle INT_HANDLE = U32.varHandle();

  private PackedBufferDescriptor() {}

  /**
   * Where the payloads start for a given item count.
   *
   * @param itemCount number of items
   * @return {@code 4 + 8 * itemCount}
   */
  public static long payloadOffset(long itemCount) {
    return TABLE_OFFSET + ENTRY_LENGTH * itemCount;
  }

  /**
   * The packed length of items with these sizes.
   *
   * @param sizes payload sizes in bytes
   * @return {@code 4 + 8n + sum(sizes)}
   * @throws TqException with {@code INVALID_ARGUMENT} naming the item if a size is negative or over
   *     2^32 - 1, or if an offset would not fit in 32 bits
   */
  public static long packedSize(long... sizes) {
    long total = payloadOffset(sizes.length);
    for (int i = 0; i < sizes.length; i++) {
      long size = sizes[i];
      if (size < 0 || size > MAX_U32) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "packed item " + i + " has size=" + size + ", the format allows 0.." + MAX_U32);
      }
      if (total > MAX_U32) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "packed item " + i + " would start at offset=" + total + " > " + MAX_U32);
      }
      total += size;
    }
    return total;
  }
}
