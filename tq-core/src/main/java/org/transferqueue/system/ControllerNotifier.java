package org.transferqueue.system;

import java.util.Objects;
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
 */
public final class ControllerNotifier implements ProductionNotifier {
  private final ControllerApi controller;
  private final ControllerRequests requests;

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
    this.controller = Objects.requireNonNull(controller, "controller");
    this.requests = Objects.requireNonNull(requests, "requests");
  }

  @Override
  public void notifyProduced(ProductionUpdate update) {
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
