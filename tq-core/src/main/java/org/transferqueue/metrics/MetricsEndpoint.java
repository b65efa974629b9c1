package org.transferqueue.metrics;

/**
 * A running HTTP endpoint that serves the meters of a registry (the Prometheus endpoint of {@code
 * tq-server} is one). Owned by whoever started it; {@link #close()} stops it and is idempotent.
 */
public interface MetricsEndpoint extends AutoCloseable {
  /**
   * Where the endpoint listens.
   *
   * @return {@code host:port}, with the port actually bound
   */
  String address();

  /** Stops serving. Idempotent. */
  @Override
  void close();

  /** Starts an endpoint; given to {@code TransferQueueSystem.builder()}. */
  @FunctionalInterface
  interface Factory {
    /**
     * Starts serving.
     *
     * @param host the address to bind
     * @param port the port; 0 picks a free one
     * @param refresh to run before each scrape: brings the gauges up to date within a deadline of
     *     its own ({@code org.transferqueue.system.MetricsCollector#refresh}); never throws
     * @return the running endpoint, owned by the caller
     */
    MetricsEndpoint start(String host, int port, Runnable refresh);
  }
}
