package org.transferqueue.server.stress;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * The layout of one checksummed row of the stress payload field (a {@code uint8} row of {@code
 * width} bytes), written by {@link #fill} and checked by {@link #check}:
 *
 * <pre>
 *   0                   8                   16        20        24                     width
 *   +-------------------+-------------------+---------+---------+----------------------+
 *   | client id (int64) | sequence (int64)  | length  | CRC32C  | random bytes ...     |
 *   +-------------------+-------------------+---------+---------+----------------------+
 * </pre>
 *
 * All fields little-endian. {@code length} is {@code width - 24}; the CRC32C covers bytes {@code
 * [0, 16)} and {@code [24, width)}, so a row carrying another client's or sequence's header, a
 * truncated row and a flipped byte all fail the check. Stateless and thread-safe.
 */
public final class StressPayload {
  /** Bytes of the header in front of the random bytes. */
  public static final int HEADER_BYTES = 24;

  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
  private static final int CLIENT_OFFSET = 0;
  private static final int SEQUENCE_OFFSET = 8;
  private static final int LENGTH_OFFSET = 16;
  private static final int CRC_OFFSET = 20;

  private StressPayload() {}

  /** What {@link #check} found in a row. */
  public enum Verdict {
    /** Header consistent and checksum matches. */
    OK,
    /** The length field disagrees with the row's width. */
    BAD_LENGTH,
    /** The checksum of the row's bytes differs from its header. */
    BAD_CHECKSUM
  }

  /**
   * Writes one row: header, then random bytes, then the checksum.
   *
   * @param row the row's bytes, at least {@link #HEADER_BYTES} long
   * @param clientId the writing client
   * @param sequence the writer's sequence number of this row
   * @param random the source of the random bytes
   */
  public static void fill(
      MemorySegment row, long clientId, long sequence, SplittableRandom random) {
    long width = row.byteSize();
    if (width < HEADER_BYTES) {
      throw new IllegalArgumentException("row width=" + width + " < header=" + HEADER_BYTES);
    }
    row.set(LONG, CLIENT_OFFSET, clientId);
    row.set(LONG, SEQUENCE_OFFSET, sequence);
    row.set(INT, LENGTH_OFFSET, (int) (width - HEADER_BYTES));
    long offset = HEADER_BYTES;
    for (; offset + Long.BYTES <= width; offset += Long.BYTES) {
      row.set(LONG, offset, random.nextLong());
    }
    for (; offset < width; offset++) {
      row.set(ValueLayout.JAVA_BYTE, offset, (byte) random.nextInt());
    }
    row.set(INT, CRC_OFFSET, crc(row));
  }

  /**
   * Checks a row's length and checksum.
   *
   * @param row the row's bytes
   * @return the verdict
   */
  public static Verdict check(MemorySegment row) {
    long width = row.byteSize();
    if (width < HEADER_BYTES || row.get(INT, LENGTH_OFFSET) != width - HEADER_BYTES) {
      return Verdict.BAD_LENGTH;
    }
    return row.get(INT, CRC_OFFSET) == crc(row) ? Verdict.OK : Verdict.BAD_CHECKSUM;
  }

  /**
   * The client id of a row's header.
   *
   * @param row the row
   * @return the id
   */
  public static long clientId(MemorySegment row) {
    return row.get(LONG, CLIENT_OFFSET);
  }

  /**
   * The sequence number of a row's header.
   *
   * @param row the row
   * @return the sequence number
   */
  public static long sequence(MemorySegment row) {
    return row.get(LONG, SEQUENCE_OFFSET);
  }

  private static int crc(MemorySegment row) {
    CRC32C crc = new CRC32C();
    // Off-heap segments give direct buffers: the checksum reads the row in place.
    crc.update(row.asSlice(0, LENGTH_OFFSET).asByteBuffer());
    crc.update(row.asSlice(HEADER_BYTES).asByteBuffer());
    return (int) crc.getValue();
  }
}
