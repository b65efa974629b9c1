package org.transferqueue.remote;

import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.transferqueue.metrics.StorageOp;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.transport.ReceivedRequest;
import org.transferqueue.transport.Reply;
import org.transferqueue.transport.RequestBodyAllocator;
import org.transferqueue.transport.RequestHandler;
import org.transferqueue.transport.TransportServer;

/** How the storage servers (storage units, store nodes) bind a handler to each table entry. */
public final class StorageHandlers {
  private StorageHandlers() {}

  /** An entry of a storage service's protocol table: a message type and how it is measured. */
  public interface StorageMessageType extends MessageType {
    /**
     * The {@code op_type} the server measures this message as.
     *
     * @return the operation, or null for a message that is not measured
     */
    StorageOp measuredAs();
  }

  /**
   * Binds one handler to every entry of a table, each measured as its entry says (samples are what
   * the handler reports to its second argument).
   *
   * @param server the server being built
   * @param table every entry of the service's table
   * @param handlers the handler of each entry
   * @param placed the entry whose request bodies {@code bodies} places
   * @param bodies where that entry's request bodies are read into
   * @param requests where requests are measured
   * @param <E> the table's entry type
   */
  public static <E extends StorageMessageType> void bind(
      TransportServer.Builder server,
      E[] table,
      Function<E, BiFunction<ReceivedRequest, LongConsumer, Reply>> handlers,
      E placed,
      RequestBodyAllocator bodies,
      StorageRequests requests) {
    for (E type : table) {
      RequestHandler handler = measured(type.measuredAs(), handlers.apply(type), requests);
      if (type == placed) {
        server.handler(type.typeId(), handler, bodies);
      } else {
        server.handler(type.typeId(), handler);
      }
    }
  }

  private static RequestHandler measured(
      StorageOp op,
      BiFunction<ReceivedRequest, LongConsumer, Reply> handler,
      StorageRequests requests) {
    return RequestHandler.replying(
        op == null
            ? r -> handler.apply(r, n -> {})
            : r -> requests.measure(op, n -> handler.apply(r, n)));
  }
}
