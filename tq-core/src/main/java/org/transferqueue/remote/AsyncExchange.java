package org.transferqueue.remote;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.transferqueue.config.HostPort;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;

/**
 * Sends one request to a server and completes with its reply: {@link
 * org.transferqueue.transport.TransportClient#callAsync(HostPort, Request, BodyDestination,
 * Duration)} in production; the protocol tests answer in-process, without sockets.
 */
@FunctionalInterface
public interface AsyncExchange {
  /**
   * Sends a request.
   *
   * @param address the server
   * @param request the request
   * @param destination where the reply's bodies go
   * @param timeout the call's deadline
   * @return the reply, owned by the caller, or the call's typed error
   */
  CompletableFuture<Response> call(
      HostPort address, Request request, BodyDestination destination, Duration timeout);
}
