package org.transferqueue.server.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.metrics.MetricsEndpoint;
import org.transferqueue.system.MetricsCollector;

/**
 * Serves a {@link PrometheusMeterRegistry} as Prometheus text (format 0.0.4) at {@code GET
 * /metrics}, on the JDK's HTTP server.
 *
 * <pre>{@code
 * TransferQueueSystem tq =
 *     PrometheusEndpoint.install(TransferQueueSystem.builder().config(config)).start();
 * tq.metricsEndpoint();   // "127.0.0.1:41234" when metrics.enabled is true
 * }</pre>
 *
 * <p>Each scrape first runs the endpoint's refresh (the role's {@link MetricsCollector#refresh},
 * bounded by {@link MetricsCollector#SCRAPE_REFRESH_DEADLINE}), so its gauges show the state at
 * scrape time. Other paths answer 404 and other methods 405. Each exchange runs on its own virtual
 * thread. Thread-safe; {@link #close()} stops the server and is idempotent.
 */
public final class PrometheusEndpoint implements MetricsEndpoint {
  /** The path metrics are served at. */
  public static final String PATH = "/metrics";

  private static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
  private static final System.Logger LOG = System.getLogger(PrometheusEndpoint.class.getName());

  private final PrometheusMeterRegistry registry;
  private final HttpServer server;
  private final ExecutorService executor;
  private final String address;
  private final Runnable refresh;
  private final AtomicBoolean closed = new AtomicBoolean();

  private PrometheusEndpoint(
      PrometheusMeterRegistry registry, HttpServer server, String host, Runnable refresh) {
    this.registry = registry;
    this.refresh = refresh;
    this.server = server;
    this.executor = Executors.newVirtualThreadPerTaskExecutor();
    server.setExecutor(executor);
    server.createContext(PATH, this::handle);
    server.start();
    int port = server.getAddress().getPort();
    this.address = (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
  }

  /**
   * A Prometheus registry whose scrape shows the upstream metric names (gauges keep a {@code
   * _total} suffix).
   *
   * @return a new registry; the caller owns it
   */
  public static PrometheusMeterRegistry newRegistry() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    registry.config().namingConvention(new TqPrometheusNaming());
    return registry;
  }

  /**
   * Starts serving {@code registry} as it is at each scrape (for meters that are always current).
   *
   * @param registry the meters; not closed by the endpoint
   * @param host the address to bind, such as {@code 127.0.0.1}
   * @param port the port, 0 for a free one
   * @return the running endpoint; the caller owns it
   * @throws TqException {@code CONNECTION_FAILED} naming host and port if the server cannot bind
   */
  public static PrometheusEndpoint start(PrometheusMeterRegistry registry, String host, int port) {
    return start(registry, host, port, () -> {});
  }

  /**
   * Starts serving {@code registry}, refreshing the gauges of {@code collector} before each scrape
   * (waiting at most {@link MetricsCollector#SCRAPE_REFRESH_DEADLINE}).
   *
   * @param registry the meters; not closed by the endpoint
   * @param host the address to bind, such as {@code 127.0.0.1}
   * @param port the port, 0 for a free one
   * @param collector the collector of the registry's gauges; not closed by the endpoint
   * @return the running endpoint; the caller owns it
   * @throws TqException {@code CONNECTION_FAILED} naming host and port if the server cannot bind
   */
  public static PrometheusEndpoint start(
      PrometheusMeterRegistry registry, String host, int port, MetricsCollector collector) {
    Objects.requireNonNull(collector, "collector");
    return start(
        registry, host, port, () -> collector.refresh(MetricsCollector.SCRAPE_REFRESH_DEADLINE));
  }

  private static PrometheusEndpoint start(
      PrometheusMeterRegistry registry, String host, int port, Runnable refresh) {
    Objects.requireNonNull(registry, "registry");
    Objects.requireNonNull(host, "host");
    if (port < 0 || port > 65535) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "metrics port=" + port + " not in 0-65535");
    }
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(host, port), 0);
    } catch (IOException | RuntimeException e) {
      throw new TqException(
          ErrorCode.CONNECTION_FAILED,
          "cannot serve metrics on " + host + ":" + port + ": " + e.getMessage(),
          e);
    }
    return new PrometheusEndpoint(registry, server, host, refresh);
  }

  /**
   * Makes a system builder record its meters in a new Prometheus registry and serve them when
   * {@code metrics.enabled} is true (on {@code network.bind_host} and {@code metrics.port}).
   *
   * @param builder the system builder
   * @return {@code builder}
   */
  public static TransferQueueSystem.Builder install(TransferQueueSystem.Builder builder) {
    PrometheusMeterRegistry registry = newRegistry();
    return builder
        .meterRegistry(registry)
        .metricsEndpoint((host, port, refresh) -> start(registry, host, port, refresh));
  }

  @Override
  public String address() {
    return address;
  }

  /**
   * The registry served.
   *
   * @return the registry
   */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!PATH.equals(exchange.getRequestURI().getPath())) {
        exchange.sendResponseHeaders(404, -1);
        return;
      }
      String method = exchange.getRequestMethod();
      if (!method.equals("GET") && !method.equals("HEAD")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      byte[] body;
      try {
        refresh.run();
        body = registry.scrape().getBytes(StandardCharsets.UTF_8);
      } catch (RuntimeException e) {
        LOG.log(System.Logger.Level.WARNING, "metrics scrape failed", e);
        exchange.sendResponseHeaders(500, -1);
        return;
      }
      exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
      if (method.equals("HEAD")) {
        exchange.sendResponseHeaders(200, -1);
        return;
      }
      exchange.sendResponseHeaders(200, body.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(body);
      }
    }
  }

  /** Stops the server, waiting for no exchange. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      server.stop(0);
      executor.close();
    }
  }
}
