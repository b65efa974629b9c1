package org.transferqueue.journal;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Layout of the journal's segment files, all numbers little-endian.
 *
 * <p>A segment file {@code <role>-<first LSN, 20 decimal digits>.tqj} starts with a header:
 *
 * <pre>
 *   0                   4           6            8                   16
 *   +-------------------+-----------+------------+-------------------+-------------+-----------+
 *   | magic u32 'TQJL'  | version   | roleLength | firstLsn u64      | role UTF-8  | crc32c    |
 *   | 0x4C4A5154        | u16 (1)   | u16        |                   | roleLength  | u32       |
 *   +-------------------+-----------+------------+-------------------+-------------+-----------+
 * </pre>
 *
 * where {@code crc32c} covers the header bytes before it. Records follow back to back:
 *
 * <pre>
 *   0              4              8              16         18              22
 *   +--------------+--------------+--------------+----------+---------------+--------+---------+
 *   | length u32   | crc32c u32   | lsn u64      | type u16 | headerLength  | header | payload |
 *   |              |              |              |          | u32           |        |         |
 *   +--------------+--------------+--------------+----------+---------------+--------+---------+
 * </pre>
 *
 * {@code length} counts the bytes after the {@code crc32c} field ({@code 14 + headerLength +
 * payload length}). {@code crc32c} is the CRC32C (Castagnoli) of the bytes from {@code type} to the
 * end of the record followed by the 8 bytes of {@code lsn}: the LSN comes last so that the checksum
 * of the caller's bytes can be computed before the record is numbered. LSNs start at 1 and increase
 * by one from record to record and from segment to segment (a segment's {@code firstLsn} is its
 * first record's, or the next LSN for an empty segment).
 */
public final class JournalDescriptor {
  private JournalDescriptor() {}

  /** 'TQJL' read as a little-endian u32. */
  public static final int MAGIC = 0x4C4A5154;

  /** The format version this build writes and reads. */
  public static final short VERSION = 1;

  /** Bytes of the segment header before the role name. */
  public static final int SEGMENT_FIXED_BYTES = 16;

  /** Bytes of {@code length} and {@code crc32c}. */
  public static final int RECORD_PREFIX_BYTES = 8;

  /** Bytes of {@code lsn}, {@code type} and {@code headerLength}: the smallest {@code length}. */
  public static final int RECORD_FIXED_BYTES = 14;

  /** Bytes before a record's header: prefix plus fixed fields. */
  public static final int RECORD_HEADER_OFFSET = RECORD_PREFIX_BYTES + RECORD_FIXED_BYTES;

  /** The largest record (all fields) this build writes or accepts: just under 2 GiB. */
  public static final long MAX_RECORD_BYTES = Integer.MAX_VALUE - 64;

  /** File name suffix of segment files. */
  public static final String SEGMENT_SUFFIX = ".tqj";

  private static final Pattern ROLE = Pattern.compile("[A-Za-z0-9_.-]{1,200}");

  /**
   * Checks a role name usable in file names.
   *
   * @param role the role, such as {@code storage-unit-0}
   * @return the role
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} naming the role otherwise
   */
  static String checkRole(String role) {
    if (role == null || !ROLE.matcher(role).matches()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "journal role must be 1-200 characters of [A-Za-z0-9_.-], got '" + role + "'");
    }
    return role;
  }

  /**
   * The file name of the segment starting at {@code firstLsn}.
   *
   * @param role the role
   * @param firstLsn the segment's first LSN
   * @return {@code <role>-<firstLsn 20 digits>.tqj}
   */
  static String segmentName(String role, long firstLsn) {
    return role + "-" + String.format("%020d", firstLsn) + SEGMENT_SUFFIX;
  }

  /**
   * The first LSN a segment file name states.
   *
   * @param role the role
   * @param fileName a file name
   * @return the LSN, or -1 when the name is not a segment of this role
   */
  static long firstLsnOf(String role, String fileName) {
    Matcher matcher =
        Pattern.compile(Pattern.quote(role) + "-(\\d{20})" + Pattern.quote(SEGMENT_SUFFIX))
            .matcher(fileName);
    return matcher.matches() ? Long.parseLong(matcher.group(1)) : -1;
  }

  /**
   * Encodes a segment header.
   *
   * @param role the role
   * @param firstLsn the first LSN
   * @return the header bytes, position 0
   */
  static ByteBuffer segmentHeader(String role, long firstLsn) {
    byte[] roleBytes = role.getBytes(StandardCharsets.UTF_8);
    ByteBuffer header =
        ByteBuffer.allocate(segmentHeaderBytes(roleBytes.length)).order(ByteOrder.LITTLE_ENDIAN);
    header.putInt(MAGIC).putShort(VERSION).putShort((short) roleBytes.length).putLong(firstLsn);
    header.put(roleBytes);
    CRC32C crc = new CRC32C();
    crc.update(header.array(), 0, header.position());
    header.putInt((int) crc.getValue());
    return header.flip();
  }

  /**
   * The length of a segment header.
   *
   * @param roleBytes bytes of the role name
   * @return the header length
   */
  static int segmentHeaderBytes(int roleBytes) {
    return SEGMENT_FIXED_BYTES + roleBytes + 4;
  }
}
