package org.transferqueue.transport;

import java.lang.management.ManagementFactory;

/**
 * Statistics of one process, as a server reports them in reply to {@link
 * MessageDescriptor#TYPE_PROCESS_STATS} ({@link TransportClient#processStats}) and as {@link
 * #current()} reads them in this process.
 *
 * <p>The heap counter is the JVM's sum of bytes allocated on the heap by all threads since the
 * process started ({@code com.sun.management.ThreadMXBean#getTotalThreadAllocatedBytes}); virtual
 * threads count on the carrier threads that ran them. The difference of two readings around an
 * operation is what the process allocated meanwhile, in every thread. Immutable.
 *
 * @param heapAllocatedBytes heap bytes allocated since the process started, or -1 when the JVM does
 *     not measure it
 */
public record ProcessStats(long heapAllocatedBytes) {
  private static final com.sun.management.ThreadMXBean THREADS = threads();

  /**
   * The statistics of this process now.
   *
   * @return the statistics; {@code heapAllocatedBytes} is -1 when not measured
   */
  public static ProcessStats current() {
    return new ProcessStats(currentHeapAllocatedBytes());
  }

  /**
   * Heap bytes this process allocated since it started, without allocating a result object.
   *
   * @return the bytes, or -1 when the JVM does not measure allocation
   */
  public static long currentHeapAllocatedBytes() {
    if (THREADS == null) {
      return -1;
    }
    try {
      return THREADS.getTotalThreadAllocatedBytes();
    } catch (UnsupportedOperationException e) {
      return -1; // a JVM without allocation accounting: reported as unknown
    }
  }

  private static com.sun.management.ThreadMXBean threads() {
    if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean bean
        && bean.isThreadAllocatedMemorySupported()) {
      if (!bean.isThreadAllocatedMemoryEnabled()) {
        bean.setThreadAllocatedMemoryEnabled(true);
      }
      return bean;
    }
    return null;
  }
}
