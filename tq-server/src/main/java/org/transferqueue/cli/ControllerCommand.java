package org.transferqueue.cli;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.transferqueue.Clock;
import org.transferqueue.DistinctErrorLog;
import org.transferqueue.config.Durability;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.metrics.ControllerRequestMeters;
import org.transferqueue.metrics.ControllerRequests;
import org.transferqueue.metrics.ProcessMemory;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.sampler.Samplers;
import org.transferqueue.server.metrics.PrometheusEndpoint;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.system.MetricsCollector;
import org.transferqueue.transport.TransportConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq controller}: runs the controller of a multi-process deployment. It binds {@code
 * network.bind_host} on the port of {@code network.controller_address} (an ephemeral port when no
 * address is configured), the rule of every role ({@link NetworkConfig#bindAddress}), prints
 * exactly one line {@code listening on HOST:PORT} once it accepts requests, and serves until the
 * process receives SIGTERM or SIGINT, when a shutdown hook closes the server and releases its
 * memory. With {@code metrics.enabled} it also serves Prometheus metrics (address logged, not
 * printed). With {@code controller.durability: journal} it first recovers from {@code
 * <durability.journal_dir>/controller} (the last checkpoint plus the journal after it; a damaged
 * journal stops the start with the file and offset), then listens, and journals every change before
 * it replies; SIGTERM takes a last checkpoint.
 */
@Command(
    name = "controller",
    description = "Run the controller role; prints 'listening on HOST:PORT' when ready.")
final class ControllerCommand implements Callable<Integer> {
  private static final System.Logger LOG = System.getLogger(ControllerCommand.class.getName());

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", required = true, description = "YAML configuration file.")
  Path config;

  @Override
  public Integer call() {
    CommandLine commandLine = spec.commandLine();
    TqConfig tq = RoleRunner.loadRole(commandLine, config);
    return RoleRunner.serve(commandLine.getOut(), start(tq));
  }

  /**
   * Starts the controller role: the controller, its server and, when {@code metrics.enabled} is
   * true, a Prometheus endpoint on {@code network.bind_host} and {@code metrics.port} exporting the
   * controller gauges (uptime, memory, partitions, indexes, per-partition progress) refreshed every
   * {@code metrics.collect_interval} and the request meters by {@code op_type} ({@code
   * tq_controller_request_total}, {@code _duration_seconds}, {@code _errors_total}, {@code
   * _samples_total}). The endpoint's address is logged, not printed.
   *
   * @param tq the configuration
   * @return the started role; the caller closes it
   */
  static RoleRunner.ServedRole start(TqConfig tq) {
    HostPort bind =
        tq.network()
            .bindAddress(
                tq.network().controllerAddress(), NetworkConfig.CONTROLLER_ADDRESS_PROP_NAME);
    TransportConfig transport =
        ConfigMapper.transportBuilder(tq.network())
            .bindHost(bind.host())
            .bindPort(bind.port())
            .build();
    Controller controller =
        tq.controller().durability() == Durability.JOURNAL
            ? Controller.recover(
                ConfigMapper.controller(tq),
                Samplers.create(tq.controller()),
                Clock.SYSTEM,
                ConfigMapper.journal(tq.durability(), "controller"))
            : new Controller(
                ConfigMapper.controller(tq), Samplers.create(tq.controller()), Clock.SYSTEM);
    RootAllocator allocator;
    try {
      allocator = RoleRunner.allocator(tq, "tq-controller");
    } catch (RuntimeException e) {
      controller.close();
      throw e;
    }
    ControllerServer server = null;
    MetricsCollector collector = null;
    try {
      PrometheusMeterRegistry registry =
          tq.metrics().enabled() ? PrometheusEndpoint.newRegistry() : null;
      DistinctErrorLog errors = new DistinctErrorLog(System.getLogger("org.transferqueue.metrics"));
      ControllerRequests requests =
          registry == null
              ? ControllerRequests.NOOP
              : new ControllerRequests(new ControllerRequestMeters(registry), Clock.SYSTEM, errors);
      server = ControllerServer.start(controller, transport, allocator, requests);
      PrometheusEndpoint endpoint = null;
      if (registry != null) {
        collector =
            new MetricsCollector(
                registry,
                controller::statistics,
                List.of(),
                null,
                Clock.SYSTEM,
                ProcessMemory::rssBytes,
                errors);
        collector.start(tq.metrics().collectInterval());
        endpoint =
            RoleRunner.startMetrics(
                registry,
                collector,
                tq.network().bindHost(),
                tq.metrics().port(),
                "controller",
                LOG);
        controller.publishMetricsEndpoint(
            RoleRunner.reachableAddress(endpoint, tq.network().controllerAddress()));
      }
      return new RoleRunner.ServedRole(
          server.address(), endpoint, endpoint, collector, server, allocator, controller);
    } catch (RuntimeException e) {
      if (collector != null) {
        collector.close();
      }
      if (server != null) {
        server.close();
      }
      allocator.close();
      controller.close();
      throw e;
    }
  }
}
