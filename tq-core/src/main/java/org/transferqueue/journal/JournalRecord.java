package org.transferqueue.journal;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Objects;
import java.util.zip.CRC32C;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * One record prepared for {@link Journal#append(JournalRecord)}: its checksum over the caller's
 * bytes is computed here, on the caller's thread and outside any lock, so that numbering it ({@code
 * append}) is cheap enough to happen under the lock that orders the role's changes.
 *
 * <p>The payload segments are read twice, here (checksum) and by the journal's writer thread (the
 * file write): the caller must keep them alive and unchanged until the append's future completes. A
 * record is appended at most once. Not thread-safe.
 */
public final class JournalRecord {
  private final short type;
  private final byte[] header;
  private final List<MemorySegment> payload;
  private final long lengthBytes;
  private final CRC32C crc = new CRC32C();
  private boolean sealed;

  private JournalRecord(short type, byte[] header, List<MemorySegment> payload, long payloadBytes) {
    this.type = type;
    this.header = header;
    this.payload = payload;
    this.lengthBytes = JournalDescriptor.RECORD_FIXED_BYTES + header.length + payloadBytes;
  }

  /**
   * Prepares a record and checksums its bytes.
   *
   * @param type the role's record type
   * @param header the role's header bytes (small: on the heap)
   * @param payload the payload, in order (off-heap segments are written without a copy); the caller
   *     keeps them alive and unchanged until the append completes
   * @return the record
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when the record would exceed {@link
   *     JournalDescriptor#MAX_RECORD_BYTES}
   */
  public static JournalRecord of(short type, byte[] header, List<MemorySegment> payload) {
    Objects.requireNonNull(header, "header");
    List<MemorySegment> segments = List.copyOf(payload);
    long payloadBytes = 0;
    for (MemorySegment segment : segments) {
      payloadBytes += segment.byteSize();
    }
    long total =
        JournalDescriptor.RECORD_PREFIX_BYTES
            + JournalDescriptor.RECORD_FIXED_BYTES
            + header.length
            + payloadBytes;
    if (total > JournalDescriptor.MAX_RECORD_BYTES) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "journal record of " + total + " bytes > max " + JournalDescriptor.MAX_RECORD_BYTES);
    }
    JournalRecord record = new JournalRecord(type, header, segments, payloadBytes);
    record.checksumBody();
    return record;
  }

  private void checksumBody() {
    ByteBuffer fixed = ByteBuffer.allocate(6).order(ByteOrder.LITTLE_ENDIAN);
    fixed.putShort(type).putInt(header.length).flip();
    crc.update(fixed);
    crc.update(header);
    for (MemorySegment segment : payload) {
      for (ByteBuffer chunk : chunks(segment)) {
        crc.update(chunk);
      }
    }
  }

  /**
   * Finishes the checksum with the LSN; called once, when the record is numbered.
   *
   * @param lsn the record's LSN
   * @return the record's CRC32C
   */
  int seal(long lsn) {
    if (sealed) {
      throw new TqException(ErrorCode.ILLEGAL_STATE, "journal record already appended");
    }
    sealed = true;
    ByteBuffer lsnBytes = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    crc.update(lsnBytes.putLong(lsn).flip());
    return (int) crc.getValue();
  }

  /**
   * The record's bytes in the file, all fields included.
   *
   * @return prefix, fixed fields, header and payload bytes
   */
  public long fileBytes() {
    return JournalDescriptor.RECORD_PREFIX_BYTES + lengthBytes;
  }

  long lengthBytes() {
    return lengthBytes;
  }

  short type() {
    return type;
  }

  byte[] header() {
    return header;
  }

  List<MemorySegment> payload() {
    return payload;
  }

  /**
   * Views a segment as byte buffers of at most 1 GiB each (a ByteBuffer holds less than 2 GiB).
   *
   * @param segment the segment
   * @return views over it, in order
   */
  static List<ByteBuffer> chunks(MemorySegment segment) {
    long size = segment.byteSize();
    long chunk = 1L << 30;
    if (size <= chunk) {
      return List.of(segment.asByteBuffer());
    }
    java.util.ArrayList<ByteBuffer> views = new java.util.ArrayList<>();
    for (long offset = 0; offset < size; offset += chunk) {
      views.add(segment.asSlice(offset, Math.min(chunk, size - offset)).asByteBuffer());
    }
    return views;
  }
}
