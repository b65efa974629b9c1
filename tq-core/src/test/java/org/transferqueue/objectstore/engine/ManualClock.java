package org.transferqueue.objectstore.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.transferqueue.Clock;

/** A test clock that moves only when told to, or by a fixed step on every reading. */
final class ManualClock implements Clock {
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private volatile long stepNs;

  @Override
  public long nanoTime() {
    return now.getAndAdd(stepNs);
  }

  void advance(Duration duration) {
    now.addAndGet(duration.toNanos());
  }

  /** Makes every later reading move the clock on by {@code step}. */
  void stepOnEveryReading(Duration step) {
    stepNs = step.toNanos();
  }
}
