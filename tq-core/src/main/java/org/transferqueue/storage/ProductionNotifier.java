package org.transferqueue.storage;

import org.transferqueue.meta.ProductionUpdate;

/**
 * Tells the controller that cells were written, so that it marks them produced.
 *
 * <p>Storage managers call it once per partition of a put, after every cell of the put is stored
 * and before the put returns. An implementation returns normally only when the controller accepted
 * the update; a rejection (for example a dtype conflict) or a failure to get an answer by the
 * deadline is reported by throwing, preferably a {@link org.transferqueue.TqException} whose code
 * says why. The storage manager then fails the put with {@link
 * org.transferqueue.ErrorCode#NOTIFICATION_FAILED}, keeping the thrown exception as the cause.
 *
 * <p>Implementations must be thread-safe: puts run concurrently.
 */
@FunctionalInterface
public interface ProductionNotifier {
  /** A notifier that accepts every update without telling anyone; for benchmarks and tests. */
  ProductionNotifier NO_OP = update -> {};

  /**
   * Reports produced cells and waits for the controller's verdict.
   *
   * @param update the partition, samples, schema and backend metadata of the written cells
   * @throws RuntimeException if the controller rejected the update or did not answer in time
   */
  void notifyProduced(ProductionUpdate update);
}
