package org.transferqueue.cli;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.transferqueue.Closeables;
import org.transferqueue.config.ConfigWarnings;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.server.metrics.PrometheusEndpoint;
import org.transferqueue.system.MetricsCollector;
import picocli.CommandLine;

/**
 * Runs one server role in the foreground: prints {@code listening on HOST:PORT} once it serves,
 * then waits until the process is asked to stop (SIGTERM, SIGINT) and closes the role and its
 * allocator from a shutdown hook.
 */
final class RoleRunner {
  private RoleRunner() {}

  /** A started role: its address, closed on shutdown. */
  interface Role extends AutoCloseable {
    HostPort address();

    @Override
    void close();
  }

  /**
   * A started server role: the server's address, its metrics endpoint if any, and what it holds,
   * closed in the given order (the endpoint and collector first, the memory last). Closing goes on
   * through a failing resource; the first failure is thrown, later ones suppressed ({@link
   * Closeables#closeAll}).
   */
  static final class ServedRole implements Role {
    private final HostPort address;
    private final PrometheusEndpoint endpoint;
    private final List<AutoCloseable> closeOrder;

    /**
     * A role.
     *
     * @param address the server's address
     * @param endpoint the metrics endpoint, or null when metrics are off
     * @param closeOrder what the role holds, in closing order; null entries are skipped
     */
    ServedRole(HostPort address, PrometheusEndpoint endpoint, AutoCloseable... closeOrder) {
      this.address = address;
      this.endpoint = endpoint;
      this.closeOrder = Arrays.asList(closeOrder);
    }

    @Override
    public HostPort address() {
      return address;
    }

    /**
     * The metrics endpoint's {@code host:port}.
     *
     * @return the address while {@code metrics.enabled}; empty otherwise
     */
    Optional<String> metricsAddress() {
      return Optional.ofNullable(endpoint).map(PrometheusEndpoint::address);
    }

    @Override
    public void close() {
      Closeables.closeAll(closeOrder);
    }
  }

  /**
   * Set by {@code tq up} on the roles it starts: the parent logged the configuration's warnings
   * once already, so its children do not repeat them.
   */
  static final String CHILD_OF_UP_PROPERTY = "tq.up.child";

  /**
   * Loads {@code file} with the environment's overrides ({@code TQ_AUTH_TOKEN} and the other {@code
   * TQ_*} variables), naming the file in the error if it cannot be read or is invalid, and applies
   * its {@code logging.level}.
   */
  static TqConfig load(CommandLine commandLine, Path file) {
    TqConfig config;
    try {
      config = TqConfigs.load(file, System.getenv());
    } catch (RuntimeException e) {
      throw new CommandLine.ParameterException(
          commandLine, e.getMessage(), e, null, file.toString());
    }
    LogLevels.apply(config.logging().level());
    return config;
  }

  /**
   * Loads a server role's configuration as {@link #load} does and logs its {@linkplain
   * TqConfig#warnings() warnings} once (a client or embedded system logs them itself; the roles
   * started by {@code tq up} leave that to {@code tq up}).
   */
  static TqConfig loadRole(CommandLine commandLine, Path file) {
    TqConfig config = load(commandLine, file);
    if (!Boolean.getBoolean(CHILD_OF_UP_PROPERTY)) {
      ConfigWarnings.log(config);
    }
    return config;
  }

  /** The address at {@code index} of a configured list, or a usage error naming key and index. */
  static HostPort address(
      CommandLine commandLine, List<HostPort> addresses, String key, String option, int index) {
    if (index < 0 || index >= addresses.size()) {
      throw new CommandLine.ParameterException(
          commandLine,
          option
              + "="
              + index
              + " is not an index of "
              + key
              + " ("
              + addresses.size()
              + " entries)");
    }
    return addresses.get(index);
  }

  /** The process's root allocator, limited by {@code memory.limit_bytes}. */
  static RootAllocator allocator(TqConfig config, String name) {
    return RootAllocator.builder()
        .name(name)
        .limitBytes(config.memory().limitBytes().orElse(Long.MAX_VALUE))
        .build();
  }

  /**
   * Serves a role's metrics over HTTP and logs (not prints) where.
   *
   * @param registry the role's meters
   * @param collector the collector of the role's gauges, refreshed before each scrape; or null when
   *     every meter of the role is always current
   * @param host the host to bind
   * @param port the port to bind; 0 takes a free one
   * @param role the role as the log line names it, e.g. {@code store node 2}
   * @param log the role's logger
   * @return the started endpoint; the role closes it
   */
  static PrometheusEndpoint startMetrics(
      PrometheusMeterRegistry registry,
      MetricsCollector collector,
      String host,
      int port,
      String role,
      System.Logger log) {
    PrometheusEndpoint endpoint =
        collector == null
            ? PrometheusEndpoint.start(registry, host, port)
            : PrometheusEndpoint.start(registry, host, port, collector);
    log.log(
        System.Logger.Level.INFO,
        role + " metrics on http://" + endpoint.address() + PrometheusEndpoint.PATH);
    return endpoint;
  }

  /**
   * The address other processes reach an endpoint at: its own, unless it listens on every interface
   * ({@code 0.0.0.0} or {@code ::}), then the host of the role's configured address with the
   * endpoint's port.
   *
   * @param endpoint the running endpoint
   * @param roleAddress the role's configured address, if any
   * @return {@code host:port}
   */
  static String reachableAddress(PrometheusEndpoint endpoint, Optional<HostPort> roleAddress) {
    HostPort bound = HostPort.parse(endpoint.address());
    boolean wildcard = bound.host().equals("0.0.0.0") || bound.host().equals("::");
    if (wildcard && roleAddress.isPresent()) {
      return new HostPort(roleAddress.get().host(), bound.port()).toString();
    }
    return bound.toString();
  }

  /**
   * Prints the role's address and blocks until shutdown has closed it; with {@code
   * -Dtq.parent.pid=PID} the role also stops when that process ends ({@link ParentWatch}).
   *
   * @param out where the single {@code listening on} line goes
   * @param role the started role, closed by the shutdown hook
   * @return the exit status
   */
  static int serve(PrintWriter out, Role role) {
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            Thread.ofPlatform()
                .name("tq-shutdown")
                .unstarted(
                    () -> {
                      try {
                        role.close();
                      } finally {
                        stopped.countDown();
                      }
                    }));
    out.println("listening on " + role.address());
    out.flush();
    ParentWatch.exitWithParent();
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }
}
