package org.transferqueue.objectstore.engine;

/**
 * A monotonic clock in nanoseconds, injected so that leases, pins and timeouts can be tested
 * without waiting.
 *
 * <p>Implementations must be thread-safe and never go backwards.
 */
@FunctionalInterface
public interface NanoClock {
  /** The system's monotonic clock. */
  NanoClock SYSTEM = System::nanoTime;

  /**
   * The current time.
   *
   * @return nanoseconds from an arbitrary origin; only differences are meaningful
   */
  long nanoTime();
}
