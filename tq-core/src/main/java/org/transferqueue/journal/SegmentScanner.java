package org.transferqueue.journal;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.zip.CRC32C;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Reads and checks every segment of a journal in LSN order during recovery, hands the records past
 * the checkpoint to a visitor, and cuts a torn last record off the last segment.
 *
 * <p>Damage is told apart from a torn tail by where it is: only the end of the last segment may
 * hold an incomplete record (a write the process did not finish) or zeros (a file extended by the
 * file system whose data never reached the disk); any other malformed record, any checksum mismatch
 * and any gap in the LSNs is {@link ErrorCode#CORRUPT_DATA} naming file and offset. Records before
 * the damage have been visited when it is found: the caller discards its state.
 *
 * <p>One thread; one scratch buffer reused for every record (grown to the largest).
 */
final class SegmentScanner {
  private static final System.Logger LOG = System.getLogger(SegmentScanner.class.getName());

  private final String role;
  private final long afterLsn;
  private final RecordVisitor visitor;
  private final CRC32C crc = new CRC32C();
  private final ByteBuffer prefix = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
  private final ByteBuffer lsnBytes = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
  private ByteBuffer body = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
  private long expected;
  private long replayed;
  private long skipped;
  private long truncatedBytes;

  SegmentScanner(String role, long afterLsn, RecordVisitor visitor) {
    this.role = role;
    this.afterLsn = afterLsn;
    this.visitor = visitor;
  }

  /**
   * Scans all segments, ascending by first LSN; the last one may be shortened (torn tail).
   *
   * @param segments the segments (the last one's {@code bytes} is updated after a truncation)
   * @return the recovery figures
   * @throws IOException on a read error
   */
  Recovery scan(List<Segment> segments) throws IOException {
    expected = segments.getFirst().firstLsn;
    if (expected > afterLsn + 1) {
      throw corrupt(
          segments.getFirst(),
          0,
          "starts at LSN "
              + expected
              + " but the checkpoint covers only LSN "
              + afterLsn
              + ": an earlier segment file is missing");
    }
    for (int i = 0; i < segments.size(); i++) {
      scanSegment(segments.get(i), i == segments.size() - 1);
    }
    return new Recovery(replayed, skipped, expected - 1, truncatedBytes, segments.size());
  }

  private void scanSegment(Segment segment, boolean last) throws IOException {
    try (FileChannel channel =
        FileChannel.open(segment.path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      long position = checkHeader(channel, segment, channel.size(), last);
      long size = channel.size();
      while (position < size) {
        long end = readRecord(channel, segment, position, size, last);
        if (end < 0) {
          truncate(channel, segment, position, size);
          return;
        }
        position = end;
      }
      segment.bytes = size;
    }
  }

  private long checkHeader(FileChannel channel, Segment segment, long size, boolean last)
      throws IOException {
    int roleBytes = role.getBytes(StandardCharsets.UTF_8).length;
    int headerBytes = JournalDescriptor.segmentHeaderBytes(roleBytes);
    if (size < headerBytes) {
      if (!last || segment.firstLsn != expected) {
        throw corrupt(segment, 0, "is " + size + " bytes, shorter than its header");
      }
      // A crash while the writer started this segment: nothing was ever appended to it.
      LOG.log(
          System.Logger.Level.WARNING,
          "journal {0}: incomplete segment header ({1} bytes) rewritten",
          segment.path,
          size);
      channel.truncate(0);
      ByteBuffer fresh = JournalDescriptor.segmentHeader(role, segment.firstLsn);
      while (fresh.hasRemaining()) {
        channel.write(fresh, fresh.position());
      }
      channel.force(true);
      truncatedBytes = size;
      return headerBytes;
    }
    ByteBuffer header = ByteBuffer.allocate(headerBytes).order(ByteOrder.LITTLE_ENDIAN);
    readFully(channel, header, 0);
    header.flip();
    crc.reset();
    crc.update(header.array(), 0, headerBytes - 4);
    if (header.getInt(0) != JournalDescriptor.MAGIC) {
      throw corrupt(segment, 0, "is not a journal segment (bad magic)");
    }
    if (header.getShort(4) != JournalDescriptor.VERSION) {
      throw corrupt(segment, 4, "has format version " + header.getShort(4) + ", expected 1");
    }
    if ((int) crc.getValue() != header.getInt(headerBytes - 4) || header.getShort(6) != roleBytes) {
      throw corrupt(segment, 0, "has a damaged header (CRC32C mismatch)");
    }
    long firstLsn = header.getLong(8);
    if (firstLsn != segment.firstLsn) {
      throw corrupt(segment, 8, "states first LSN " + firstLsn + " unlike its name");
    }
    if (firstLsn != expected) {
      throw corrupt(
          segment,
          0,
          "starts at LSN "
              + firstLsn
              + " but the previous segment ends at LSN "
              + (expected - 1)
              + ": a segment file is missing");
    }
    return headerBytes;
  }

  /** Returns the end of the record at {@code position}, or -1 for a torn tail. */
  private long readRecord(
      FileChannel channel, Segment segment, long position, long size, boolean last)
      throws IOException {
    long left = size - position;
    if (left < JournalDescriptor.RECORD_PREFIX_BYTES) {
      return tornOrCorrupt(segment, position, last, "has " + left + " stray bytes at its end");
    }
    prefix.clear();
    readFully(channel, prefix, position);
    long length = Integer.toUnsignedLong(prefix.getInt(0));
    int storedCrc = prefix.getInt(4);
    if (length < JournalDescriptor.RECORD_FIXED_BYTES
        || length + JournalDescriptor.RECORD_PREFIX_BYTES > JournalDescriptor.MAX_RECORD_BYTES) {
      if (last && allZero(channel, position, size)) {
        return -1;
      }
      throw corrupt(segment, position, "has a record of impossible length " + length);
    }
    if (length > left - JournalDescriptor.RECORD_PREFIX_BYTES) {
      if (last && recordFollows(channel, position, size)) {
        throw corrupt(
            segment,
            position,
            "has a record whose length "
                + length
                + " reaches beyond the file although intact records follow it");
      }
      return tornOrCorrupt(
          segment, position, last, "has a record of " + length + " bytes ending beyond the file");
    }
    ByteBuffer record = scratch((int) length);
    readFully(channel, record, position + JournalDescriptor.RECORD_PREFIX_BYTES);
    record.flip();
    long lsn = record.getLong(0);
    crc.reset();
    crc.update(record.array(), 8, (int) length - 8);
    crc.update(lsnBytes.clear().putLong(0, lsn).limit(8));
    if ((int) crc.getValue() != storedCrc) {
      throw corrupt(segment, position, "has a record whose CRC32C does not match");
    }
    if (lsn != expected) {
      throw corrupt(segment, position, "has LSN " + lsn + " where LSN " + expected + " belongs");
    }
    int headerLength = record.getInt(10);
    if (headerLength < 0 || headerLength > length - JournalDescriptor.RECORD_FIXED_BYTES) {
      throw corrupt(segment, position, "has a record header of impossible length " + headerLength);
    }
    if (lsn > afterLsn) {
      int payloadOffset = JournalDescriptor.RECORD_FIXED_BYTES + headerLength;
      ByteBuffer header =
          record
              .slice(JournalDescriptor.RECORD_FIXED_BYTES, headerLength)
              .order(ByteOrder.LITTLE_ENDIAN);
      MemorySegment payload =
          MemorySegment.ofArray(record.array()).asSlice(payloadOffset, length - payloadOffset);
      visitor.onRecord(lsn, record.getShort(8), header, payload);
      replayed++;
    } else {
      skipped++;
    }
    expected++;
    return position + JournalDescriptor.RECORD_PREFIX_BYTES + length;
  }

  /**
   * Whether an intact record numbered after the one at {@code position} lies further on: then the
   * record's length is damaged, not torn (a torn record is the last thing in the file).
   */
  private boolean recordFollows(FileChannel channel, long position, long size) throws IOException {
    long from = position + JournalDescriptor.RECORD_PREFIX_BYTES;
    ByteBuffer rest = scratch((int) Math.min(size - from, Integer.MAX_VALUE - 64));
    readFully(channel, rest, from);
    int end = rest.position();
    long next = expected + 1;
    for (int at = 0; at + JournalDescriptor.RECORD_HEADER_OFFSET <= end; at++) {
      if (rest.getLong(at + JournalDescriptor.RECORD_PREFIX_BYTES) != next) {
        continue;
      }
      long length = Integer.toUnsignedLong(rest.getInt(at));
      if (length < JournalDescriptor.RECORD_FIXED_BYTES
          || at + JournalDescriptor.RECORD_PREFIX_BYTES + length > end) {
        continue;
      }
      crc.reset();
      crc.update(rest.array(), at + 16, (int) length - 8);
      crc.update(lsnBytes.clear().putLong(0, next).limit(8));
      if ((int) crc.getValue() == rest.getInt(at + 4)) {
        return true;
      }
    }
    return false;
  }

  private long tornOrCorrupt(Segment segment, long position, boolean last, String what) {
    if (last) {
      return -1;
    }
    throw corrupt(segment, position, what + " (not the last segment)");
  }

  private void truncate(FileChannel channel, Segment segment, long position, long size)
      throws IOException {
    LOG.log(
        System.Logger.Level.WARNING,
        "journal {0}: torn last record at offset {1} ({2} bytes) truncated; the records up to LSN"
            + " {3} are intact",
        segment.path,
        position,
        size - position,
        expected - 1);
    channel.truncate(position);
    channel.force(true);
    truncatedBytes = size - position;
    segment.bytes = position;
  }

  private ByteBuffer scratch(int length) {
    if (body.capacity() < length) {
      body =
          ByteBuffer.allocate(Math.max(length, body.capacity() * 2)).order(ByteOrder.LITTLE_ENDIAN);
    }
    return body.clear().limit(length);
  }

  private boolean allZero(FileChannel channel, long from, long size) throws IOException {
    long position = from;
    while (position < size) {
      ByteBuffer chunk = scratch((int) Math.min(size - position, 1 << 16));
      readFully(channel, chunk, position);
      for (int i = 0; i < chunk.position(); i++) {
        if (chunk.get(i) != 0) {
          return false;
        }
      }
      position += chunk.position();
    }
    return true;
  }

  private static void readFully(FileChannel channel, ByteBuffer into, long position)
      throws IOException {
    long at = position;
    while (into.hasRemaining()) {
      int n = channel.read(into, at);
      if (n < 0) {
        throw new IOException("unexpected end of file at offset " + at);
      }
      at += n;
    }
  }

  private TqException corrupt(Segment segment, long offset, String what) {
    return new TqException(
        ErrorCode.CORRUPT_DATA,
        "journal file "
            + segment.path
            + " at offset "
            + offset
            + " "
            + what
            + "; refusing to start");
  }
}
