package org.transferqueue.codec;

import static org.transferqueue.codec.PackedBufferDescriptor.ENTRY_LENGTH;
import static org.transferqueue.codec.PackedBufferDescriptor.ENTRY_SIZE_OFFSET;
import static org.transferqueue.codec.PackedBufferDescriptor.INT_HANDLE;
import static org.transferqueue.codec.PackedBufferDescriptor.ITEM_COUNT_OFFSET;
import static org.transferqueue.codec.PackedBufferDescriptor.TABLE_OFFSET;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A re-pointable, validating view over a packed buffer laid out as in {@link
 * PackedBufferDescriptor}.
 *
 * <p>{@link #wrap} checks the whole item table once against the buffer's length, so a truncated
 * buffer or a lying offset or size is reported as {@link ErrorCode#CORRUPT_DATA} naming the value,
 * and {@link #item} never reads out of bounds. Items are slices (views) of the wrapped buffer and
 * are valid as long as it is. Not thread-safe; cheap to create.
 *
 * <pre>{@code
 * PackedBufferReader reader = new PackedBufferReader().wrap(buffer, "key 'k1'");
 * MemorySegment main = reader.item(0);
 * }</pre>
 */
public final class PackedBufferReader {
  private MemorySegment buffer = MemorySegment.NULL;
  private String valueName = "";
  private int itemCount;

  /** Creates a reader pointing at nothing; call {@link #wrap} before use. */
  public PackedBufferReader() {}

  /**
   * Points this reader at a packed buffer and validates its item table.
   *
   * @param packed the packed bytes, exactly the packed length or longer (trailing bytes are
   *     ignored); not copied
   * @param valueName what the buffer holds, for error messages (for example the storage key)
   * @return this reader
   * @throws TqException with {@code CORRUPT_DATA} naming the value if the buffer is shorter than
   *     its table or an item lies outside the payload area
   */
  public PackedBufferReader wrap(MemorySegment packed, String valueName) {
    Objects.requireNonNull(packed, "packed");
    this.valueName = Objects.requireNonNull(valueName, "valueName");
    this.buffer = MemorySegment.NULL;
    this.itemCount = 0;
    long length = packed.byteSize();
    if (length < TABLE_OFFSET) {
      throw corrupt("has " + length + " bytes, fewer than the 4-byte item count");
    }
    long count = Integer.toUnsignedLong((int) INT_HANDLE.get(packed, (long) ITEM_COUNT_OFFSET));
    long payloadStart = PackedBufferDescriptor.payloadOffset(count);
    if (payloadStart > length) {
      throw corrupt(
          "has item count="
              + count
              + " needing a table up to offset="
              + payloadStart
              + " but only "
              + length
              + " bytes");
    }
    for (long i = 0; i < count; i++) {
      long entry = TABLE_OFFSET + ENTRY_LENGTH * i;
      long offset = Integer.toUnsignedLong((int) INT_HANDLE.get(packed, entry));
      long size = Integer.toUnsignedLong((int) INT_HANDLE.get(packed, entry + ENTRY_SIZE_OFFSET));
      if (offset < payloadStart || offset + size > length) {
        throw corrupt(
            "item "
                + i
                + " has offset="
                + offset
                + " size="
                + size
                + " outside the payload area ["
                + payloadStart
                + ", "
                + length
                + ")");
      }
    }
    this.buffer = packed;
    this.itemCount = (int) count;
    return this;
  }

  /**
   * The number of items.
   *
   * @return the item count of the wrapped buffer
   */
  public int itemCount() {
    return itemCount;
  }

  /**
   * A view of one item's bytes.
   *
   * @param index 0 to {@link #itemCount()} - 1
   * @return a slice of the wrapped buffer
   * @throws IndexOutOfBoundsException if the index is out of range
   */
  public MemorySegment item(int index) {
    Objects.checkIndex(index, itemCount);
    long entry = TABLE_OFFSET + (long) ENTRY_LENGTH * index;
    long offset = Integer.toUnsignedLong((int) INT_HANDLE.get(buffer, entry));
    long size = Integer.toUnsignedLong((int) INT_HANDLE.get(buffer, entry + ENTRY_SIZE_OFFSET));
    return buffer.asSlice(offset, size);
  }

  /**
   * Views of all items, in order.
   *
   * @return a new list of slices of the wrapped buffer
   */
  public List<MemorySegment> items() {
    List<MemorySegment> items = new ArrayList<>(itemCount);
    for (int i = 0; i < itemCount; i++) {
      items.add(item(i));
    }
    return items;
  }

  /**
   * The packed length: the end of the last payload, or the table end when there are none.
   *
   * @return bytes of the wrapped buffer the format uses
   */
  public long packedLength() {
    long end = PackedBufferDescriptor.payloadOffset(itemCount);
    for (int i = 0; i < itemCount; i++) {
      long entry = TABLE_OFFSET + (long) ENTRY_LENGTH * i;
      long offset = Integer.toUnsignedLong((int) INT_HANDLE.get(buffer, entry));
      long size = Integer.toUnsignedLong((int) INT_HANDLE.get(buffer, entry + ENTRY_SIZE_OFFSET));
      end = Math.max(end, offset + size);
    }
    return end;
  }

  private TqException corrupt(String detail) {
    return new TqException(
        ErrorCode.CORRUPT_DATA, "packed value " + valueName + " is corrupt: buffer " + detail);
  }
}
