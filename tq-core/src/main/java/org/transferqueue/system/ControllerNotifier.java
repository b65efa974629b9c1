package org.transferqueue.system;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.metrics.ControllerOp;
import org.transferqueue.metrics.ControllerRequests;
import org.transferqueue.storage.ProductionNotifier;

/**
 * Delivers storage's production notifications to a controller, in-process or remote. A rejected
 * update (for example a schema conflict) fails the put that sent it: a {@code SCHEMA_CONFLICT} or
 * {@code STALE_METADATA} keeps its code, any other failure (including transport errors) becomes a
 * {@link StorageException} with {@link ErrorCode#NOTIFICATION_FAILED}. Thread-safe if the
 * controller is.
 *
 * <p><b>Unknown outcomes.</b> A notification that fails with {@code CONNECTION_FAILED} or {@code
 * DEADLINE_EXCEEDED} may or may not have been applied (a controller killed after it journaled the
 * update, before its reply left). With a retry window, the notifier sends it again until the window
 * closes (backing off from 10 ms to 500 ms): a production update is idempotent (the same samples at
 * the same generations with the same schema), so a restarted, recovered controller either accepts
 * it, whether or not it had recorded it, and the put succeeds with its cells kept, or refuses it
 * for a generation cleared meanwhile ({@code STALE_METADATA}), and the put rolls its cells back.
 * Only a controller that stays away past the window leaves the outcome unknown; the put then fails
 * with {@code NOTIFICATION_FAILED} (see docs/RELIABILITY.md, 5.7, for what that means for the
 * samples).
 */
public final class ControllerNotifier implements ProductionNotifier {
  private static final long FIRST_BACKOFF_NS = Duration.ofMillis(10).toNanos();
  private static final long MAX_BACKOFF_NS = Duration.ofMillis(500).toNanos();

  private final ControllerApi controller;
  private final ControllerRequests requests;
  private final Duration retryWindow;
  private final Clock clock;

  /**
   * Creates a notifier.
   *
   * @param controller the controller to notify
   */
  public ControllerNotifier(ControllerApi controller) {
    this(controller, ControllerRequests.NOOP);
  }

  /**
   * Creates a notifier whose notifications are measured.
   *
   * @param controller the controller to notify
   * @param requests measures each notification
   */
  public ControllerNotifier(ControllerApi controller, ControllerRequests requests) {
    this(controller, requests, Duration.ZERO, Clock.SYSTEM);
  }

  /**
   * Creates a notifier that sends a notification of unknown outcome again within a window.
   *
   * @param controller the controller to notify
   * @param requests measures each notification
   * @param retryWindow how long after the first attempt a notification that failed with {@code
   *     CONNECTION_FAILED} or {@code DEADLINE_EXCEEDED} is sent again; zero for never
   * @param clock the time source of the window
   */
  public ControllerNotifier(
      ControllerApi controller, ControllerRequests requests, Duration retryWindow, Clock clock) {
    this.controller = Objects.requireNonNull(controller, "controller");
    this.requests = Objects.requireNonNull(requests, "requests");
    this.retryWindow = Objects.requireNonNull(retryWindow, "retryWindow");
    this.clock = Objects.requireNonNull(clock, "clock");
    if (retryWindow.isNegative()) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "retryWindow=" + retryWindow + " < 0");
    }
  }

  @Override
  public void notifyProduced(ProductionUpdate update) {
    long deadlineNs = clock.nanoTime() + retryWindow.toNanos();
    long backoffNs = FIRST_BACKOFF_NS;
    while (true) {
      try {
        notifyOnce(update);
        return;
      } catch (StorageException e) {
        if (!(e.getCause() instanceof TqException cause) || !outcomeUnknown(cause)) {
          throw e;
        }
        long remainingNs = deadlineNs - clock.nanoTime();
        if (remainingNs <= 0) {
          throw e;
        }
        // Waiting for a controller to come back, not for state: a bounded back-off.
        LockSupport.parkNanos(Math.min(backoffNs, remainingNs));
        if (Thread.currentThread().isInterrupted()) {
          throw e;
        }
        backoffNs = Math.min(backoffNs * 2, MAX_BACKOFF_NS);
      }
    }
  }

  private static boolean outcomeUnknown(TqException e) {
    return e.code() == ErrorCode.CONNECTION_FAILED || e.code() == ErrorCode.DEADLINE_EXCEEDED;
  }

  private void notifyOnce(ProductionUpdate update) {
    try {
      requests.measure(
          ControllerOp.NOTIFY_DATA_UPDATE,
          () -> {
            controller.updateProductionStatus(update);
            return update.indexes().size();
          },
          n -> n);
    } catch (TqException e) {
      if (e.code() == ErrorCode.SCHEMA_CONFLICT || e.code() == ErrorCode.STALE_METADATA) {
        throw e;
      }
      throw new StorageException(
          ErrorCode.NOTIFICATION_FAILED,
          "the controller rejected the production update of partition '"
              + update.partitionId()
              + "': "
              + e.getMessage(),
          e);
    }
  }
}
