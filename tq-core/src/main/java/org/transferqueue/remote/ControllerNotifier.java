package org.transferqueue.remote;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.controller.ControllerApi;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.ProductionUpdate;

/**
 * Delivers storage's production notifications to a controller, in-process or remote. A rejected
 * update (for example a schema conflict) fails the put that sent it: a {@code SCHEMA_CONFLICT}
 * keeps its code, any other failure (including transport errors) becomes a {@link StorageException}
 * with {@link ErrorCode#NOTIFICATION_FAILED}. Thread-safe if the controller is.
 */
public final class ControllerNotifier implements ProductionNotifier {
  private final ControllerApi controller;

  /**
   * Creates a notifier.
   *
   * @param controller the controller to notify
   */
  public ControllerNotifier(ControllerApi controller) {
    this.controller = Objects.requireNonNull(controller, "controller");
  }

  @Override
  public void notifyProduced(ProductionUpdate update) {
    List<Long> indexes = update.globalIndexes();
    Map<Long, Map<String, Object>> backendMeta = new LinkedHashMap<>();
    for (int i = 0; i < update.backendMeta().size(); i++) {
      Map<String, Object> perField = update.backendMeta().get(i);
      if (perField != null && !perField.isEmpty()) {
        backendMeta.put(indexes.get(i), perField);
      }
    }
    try {
      controller.updateProductionStatus(
          new org.transferqueue.controller.ProductionUpdate(
              update.partitionId(), indexes, update.fieldSchema(), backendMeta));
    } catch (TqException e) {
      if (e.code() == ErrorCode.SCHEMA_CONFLICT) {
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
