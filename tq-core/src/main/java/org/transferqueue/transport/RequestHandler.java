package org.transferqueue.transport;

import java.util.Objects;
import java.util.function.Function;

/**
 * Handles the requests of one message type on a {@link TransportServer}.
 *
 * <p>Each request runs on its own virtual thread, so requests of one connection are handled
 * concurrently and may be answered out of order. The handler answers through the {@link Responder},
 * before returning or later from another thread. An exception thrown by the handler becomes an
 * error reply (a {@link org.transferqueue.TqException} keeps its code, anything else is {@code
 * INTERNAL}) and never affects the connection or the server. When the server closes, the handler's
 * thread is interrupted after the grace period.
 *
 * <p>Body ownership: see {@link ReceivedRequest}.
 */
@FunctionalInterface
public interface RequestHandler {
  /**
   * Handles one request.
   *
   * @param request the request; its bodies stay valid until this method has returned and the reply
   *     has been written
   * @param responder answers the request once
   */
  void onRequest(ReceivedRequest request, Responder responder);

  /**
   * A handler that computes its reply on the request's thread.
   *
   * @param function maps a request to its reply; may throw to send an error reply
   * @return the handler
   */
  static RequestHandler replying(Function<ReceivedRequest, Reply> function) {
    Objects.requireNonNull(function, "function");
    return (request, responder) -> responder.reply(function.apply(request));
  }
}
