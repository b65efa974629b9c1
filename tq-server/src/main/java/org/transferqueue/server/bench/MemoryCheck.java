package org.transferqueue.server.bench;

import java.util.List;
import java.util.Locale;
import java.util.OptionalLong;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Refuses a size before any memory is taken when the machine or the configured allocator limit
 * cannot hold it. Off-heap memory is what counts; the JVM's heap limit is irrelevant.
 *
 * <p>A case holds three copies of the data at its peak: the generated batch, the backend's stored
 * copy (for MooncakeStore, the segment sized by {@link #mooncakeSegmentBytes}) and the batch a get
 * returns. Power-of-two pool blocks and bookkeeping add up to {@value #SLACK_PERCENT} % on top.
 */
public final class MemoryCheck {
  /** Extra room, in percent of the estimate, for pool rounding and bookkeeping. */
  public static final int SLACK_PERCENT = 10;

  private static final long MIB = 1L << 20;

  private MemoryCheck() {}

  /**
   * The MooncakeStore segment a case configures: the batch plus a quarter plus 64 MiB, in whole
   * MiB.
   *
   * @param bytes the bytes of one batch
   * @return the segment size
   */
  public static long mooncakeSegmentBytes(long bytes) {
    long wanted = bytes + bytes / 4 + 64 * MIB;
    return (wanted + MIB - 1) / MIB * MIB;
  }

  /**
   * What a backend's system takes at its peak: the stored copy and the copy a get returns.
   *
   * @param backend the backend
   * @param bytes the bytes of one batch
   * @return bytes
   */
  public static long systemBytes(BenchBackend backend, long bytes) {
    long stored =
        switch (backend) {
          case SIMPLE_STORAGE -> bytes;
          case MOONCAKE_STORE -> mooncakeSegmentBytes(bytes);
        };
    return withSlack(stored + bytes);
  }

  /**
   * What a size needs at its peak: the generated data plus the largest backend's system.
   *
   * @param bytes the bytes of one batch
   * @param backends the backends that will run
   * @return bytes
   */
  public static long requiredBytes(long bytes, List<BenchBackend> backends) {
    long system = 0;
    for (BenchBackend backend : backends) {
      system = Math.max(system, systemBytes(backend, bytes));
    }
    return withSlack(bytes) + system;
  }

  /**
   * Checks that a size fits.
   *
   * @param size the size
   * @param bytes the bytes of one batch of it
   * @param backends the backends that will run
   * @param probe the machine's memory
   * @param allocatorLimit {@code memory.limit_bytes} of the systems that will run, empty when
   *     unlimited
   * @throws TqException {@code OUT_OF_MEMORY} naming the size, what it needs and what is there
   */
  public static void check(
      BenchSize size,
      long bytes,
      List<BenchBackend> backends,
      MemoryProbe probe,
      OptionalLong allocatorLimit) {
    long required = requiredBytes(bytes, backends);
    long available = probe.availableBytes();
    if (available >= 0 && required > available) {
      throw new TqException(
          ErrorCode.OUT_OF_MEMORY,
          String.format(
              Locale.ROOT,
              "size %s holds %s per batch and needs about %s of memory (the data, the stored copy"
                  + " and the copy a get returns), but only %s of physical memory is available;"
                  + " choose a smaller preset or --batch/--fields/--seq-len",
              size.label(),
              gib(bytes),
              gib(required),
              gib(available)));
    }
    if (allocatorLimit.isPresent()) {
      for (BenchBackend backend : backends) {
        long system = systemBytes(backend, bytes);
        if (system > allocatorLimit.getAsLong()) {
          throw new TqException(
              ErrorCode.OUT_OF_MEMORY,
              String.format(
                  Locale.ROOT,
                  "size %s on %s needs about %s in the system's allocator (the stored copy and the"
                      + " copy a get returns), but memory.limit_bytes=%d (%s); raise the limit or"
                      + " choose a smaller size",
                  size.label(),
                  backend.configName(),
                  gib(system),
                  allocatorLimit.getAsLong(),
                  gib(allocatorLimit.getAsLong())));
        }
      }
    }
  }

  private static long withSlack(long bytes) {
    return bytes + bytes / 100 * SLACK_PERCENT;
  }

  static String gib(long bytes) {
    return bytes >= (1L << 30)
        ? String.format(Locale.ROOT, "%.2f GiB", bytes / (double) (1L << 30))
        : String.format(Locale.ROOT, "%.1f MiB", bytes / (double) MIB);
  }
}
