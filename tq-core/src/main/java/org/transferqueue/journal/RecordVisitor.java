package org.transferqueue.journal;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

/** Receives the records a {@link Journal#recover recovery} replays, in LSN order. */
@FunctionalInterface
public interface RecordVisitor {
  /**
   * Applies one record. The buffers are the journal's scratch memory, valid only during the call:
   * copy what must be kept.
   *
   * @param lsn the record's log sequence number
   * @param type the record type the role appended it with
   * @param header the record's header bytes (position 0, limit its length; little-endian order)
   * @param payload the record's payload bytes (a heap segment, possibly empty)
   */
  void onRecord(long lsn, short type, ByteBuffer header, MemorySegment payload);
}
