package org.transferqueue;

/**
 * The one time source of the code base: a monotonic clock for deadlines and durations, and a wall
 * clock for timestamps people read. Injected wherever logic depends on time, so that tests control
 * it (STYLE §7); code never calls {@link System#nanoTime()} in logic.
 *
 * <p>A lambda or method reference is a clock whose monotonic time it supplies and whose wall time
 * is the system's, which suits code that only measures durations:
 *
 * <pre>{@code
 * AtomicLong now = new AtomicLong();
 * Clock clock = now::get;
 * }</pre>
 *
 * <p>Implementations must be thread-safe, and {@link #nanoTime()} must never go backwards.
 */
@FunctionalInterface
public interface Clock {
  /** The system clocks: {@link System#nanoTime()} and {@link System#currentTimeMillis()}. */
  Clock SYSTEM = System::nanoTime;

  /**
   * A monotonic time for measuring durations and deadlines; only differences are meaningful.
   *
   * @return nanoseconds since an arbitrary origin
   */
  long nanoTime();

  /**
   * The wall-clock time. The default reads the system's wall clock; a test double that controls
   * timestamps overrides it.
   *
   * @return milliseconds since the epoch
   */
  default long epochMillis() {
    return System.currentTimeMillis();
  }
}
