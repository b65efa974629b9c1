package org.transferqueue.controller;

/**
 * The time source of the controller: a monotonic clock for deadlines and a wall clock for creation
 * times. Injected so that tests control time; implementations must be thread-safe.
 */
public interface ControllerClock {
  /** The system clocks. */
  ControllerClock SYSTEM =
      new ControllerClock() {
        @Override
        public long nanoTime() {
          return System.nanoTime();
        }

        @Override
        public long epochMillis() {
          return System.currentTimeMillis();
        }
      };

  /**
   * A monotonic time for measuring durations; only differences are meaningful.
   *
   * @return nanoseconds since an arbitrary origin
   */
  long nanoTime();

  /**
   * The wall-clock time.
   *
   * @return milliseconds since the epoch
   */
  long epochMillis();
}
