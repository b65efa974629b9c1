package org.transferqueue.remote;

import java.util.function.BiFunction;
import java.util.function.LongConsumer;
import org.transferqueue.metrics.StorageOp;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.transport.ReceivedRequest;
import org.transferqueue.transport.Reply;
import org.transferqueue.transport.RequestHandler;

/** How the storage servers (storage units, store nodes) bind a table entry's handler. */
public final class StorageHandlers {
  private StorageHandlers() {}

  /**
   * A handler measured as its table entry says, or not at all.
   *
   * @param op the {@code op_type} the entry is measured as, or null for none
   * @param handler answers a request; reports the samples it names to its second argument
   * @param requests where requests are measured
   * @return the transport handler
   */
  public static RequestHandler measured(
      StorageOp op,
      BiFunction<ReceivedRequest, LongConsumer, Reply> handler,
      StorageRequests requests) {
    return RequestHandler.replying(
        op == null
            ? r -> handler.apply(r, n -> {})
            : r -> requests.measure(op, n -> handler.apply(r, n)));
  }
}
