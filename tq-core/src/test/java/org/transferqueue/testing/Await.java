package org.transferqueue.testing;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Waits in tests for a condition with a deadline, instead of sleeping for a guessed time. */
public final class Await {
  /** How long {@link #until(BooleanSupplier, String)} waits. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(20);

  private Await() {}

  /**
   * Waits until {@code condition} holds or {@link #DEFAULT_TIMEOUT} passes.
   *
   * @param condition what must become true
   * @param what a description for the failure message
   * @throws AssertionError if the deadline passes first
   */
  public static void until(BooleanSupplier condition, String what) {
    until(condition, what, DEFAULT_TIMEOUT);
  }

  /**
   * Waits until {@code condition} holds or {@code timeout} passes.
   *
   * @param condition what must become true
   * @param what a description for the failure message
   * @param timeout the longest wait
   * @throws AssertionError if the deadline passes first
   */
  public static void until(BooleanSupplier condition, String what, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out after " + timeout + " waiting for: " + what);
      }
      LockSupport.parkNanos(1_000_000L);
    }
  }
}
