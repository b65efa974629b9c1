package org.transferqueue.transport;

import java.util.concurrent.atomic.LongAdder;

/**
 * What a {@link TransportServer}'s connections moved through shared memory since it started, by way
 * of moving: the counters of {@link SharedMemoryStats}. Updated without locks by the connections'
 * reader and handler threads; read by {@link TransportServer#sharedMemoryStats()}.
 */
final class SharedMemoryCounters {
  /** Request body bytes clients wrote into ordinary granted regions. */
  final LongAdder requestBytesGranted = new LongAdder();

  /** Request body bytes clients wrote straight where a placed grant put them. */
  final LongAdder requestBytesPlaced = new LongAdder();

  /** Reply body bytes the server copied into fresh regions. */
  final LongAdder replyBytesCopied = new LongAdder();

  /** Reply body bytes lent in place, from the memory that holds them. */
  final LongAdder replyBytesLent = new LongAdder();
}
