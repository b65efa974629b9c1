package org.transferqueue.storage.simple;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.storage.ProductionNotifier;

/** A notifier that records every update and rejects those a predicate selects. */
final class RecordingNotifier implements ProductionNotifier {
  private final List<ProductionUpdate> accepted = new CopyOnWriteArrayList<>();
  private final List<ProductionUpdate> offered = new CopyOnWriteArrayList<>();
  private volatile Predicate<ProductionUpdate> reject = u -> false;

  /** Rejects, from now on, the updates {@code predicate} selects, as a dtype conflict. */
  void rejectWhen(Predicate<ProductionUpdate> predicate) {
    this.reject = predicate;
  }

  @Override
  public void notifyProduced(ProductionUpdate update) {
    offered.add(update);
    if (reject.test(update)) {
      throw new TqException(
          ErrorCode.SCHEMA_CONFLICT, "rejected update of partition " + update.partitionId());
    }
    accepted.add(update);
  }

  /** The updates that were accepted, in order. */
  List<ProductionUpdate> accepted() {
    return accepted;
  }

  /** Every update offered, accepted or not, in order. */
  List<ProductionUpdate> offered() {
    return offered;
  }
}
