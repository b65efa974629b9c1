package org.transferqueue.cli;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.transferqueue.Clock;
import org.transferqueue.CloseStack;
import org.transferqueue.DistinctErrorLog;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.metrics.ProcessMemory;
import org.transferqueue.metrics.StorageRequestMeters;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.server.metrics.PrometheusEndpoint;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.storage.simple.StorageUnitStats;
import org.transferqueue.storage.simple.UnitJournal;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.system.MetricsCollector;
import org.transferqueue.system.StorageUnitReport;
import org.transferqueue.transport.TransportConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq storage-unit}: serves one SimpleStorage unit on {@code network.bind_host} and the port
 * of {@code network.storage_unit_addresses[N]} (port 0 picks a free port), with the per-unit
 * capacity of {@code backend.SimpleStorage} and the byte limit of {@code memory}. With {@code
 * metrics.enabled} it also serves the unit's Prometheus gauges (address logged, not printed).
 */
@Command(name = "storage-unit", description = "Serve one SimpleStorage unit until SIGTERM/SIGINT.")
final class StorageUnitCommand implements Callable<Integer> {
  private static final System.Logger LOG = System.getLogger(StorageUnitCommand.class.getName());

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", required = true, description = "The YAML configuration file.")
  Path config;

  @Option(
      names = "--unit",
      required = true,
      description = "Index into network.storage_unit_addresses.")
  int unit;

  @Override
  public Integer call() {
    CommandLine commandLine = spec.commandLine();
    TqConfig tq = RoleRunner.loadRole(commandLine, config);
    HostPort address =
        RoleRunner.address(
            commandLine,
            tq.network().storageUnitAddresses(),
            NetworkConfig.STORAGE_UNIT_ADDRESSES_PROP_NAME,
            "--unit",
            unit);
    try {
      return RoleRunner.serve(commandLine.getOut(), start(tq, address, unit));
    } catch (TqException e) {
      throw new CommandLine.ExecutionException(commandLine, e.getMessage(), e);
    }
  }

  /**
   * Starts the storage-unit role: the unit, its server on {@code network.bind_host} and the port of
   * {@code address} ({@link NetworkConfig#bindAddress}) and, when {@code metrics.enabled} is true,
   * a Prometheus endpoint on {@code network.bind_host} and a free port ({@code metrics.port} is the
   * controller's) exporting the unit's gauges (capacity, active keys, utilisation, memory)
   * refreshed every {@code metrics.collect_interval} and its request meters by {@code op_type}
   * ({@code tq_storage_request_total}, {@code _duration_seconds}, {@code _errors_total}, {@code
   * _samples_total}). The endpoint's address is logged, not printed. With {@code
   * storage.durability: journal} the unit first recovers from {@code
   * <durability.journal_dir>/storage-unit-<unit>} (last checkpoint plus journal tail), and closing
   * the role writes a final checkpoint.
   *
   * @param tq the configuration
   * @param address the unit's configured address: clients connect to it, the server takes its port
   * @param unit the unit's index, part of its id
   * @return the started role; the caller closes it
   * @throws TqException {@code CORRUPT_DATA} naming file and offset when the journal is damaged,
   *     {@code ILLEGAL_STATE} when another process uses the journal directory
   */
  static RoleRunner.ServedRole start(TqConfig tq, HostPort address, int unit) {
    HostPort bind =
        tq.network()
            .bindAddress(
                Optional.of(address),
                NetworkConfig.STORAGE_UNIT_ADDRESSES_PROP_NAME + "[" + unit + "]");
    TransportConfig transport =
        ConfigMapper.transportBuilder(tq.network())
            .bindHost(bind.host())
            .bindPort(bind.port())
            .build();
    try (CloseStack cleanup = new CloseStack()) {
      RootAllocator allocator = cleanup.push(RoleRunner.allocator(tq, "tq-storage-unit-" + unit));
      StorageUnit storageUnit =
          new StorageUnit(
              "TQ_STORAGE_UNIT_" + unit,
              tq.backend().simpleStorage().perUnitCapacity(),
              allocator,
              tq.memory().storageUnitLimitBytes().orElse(Long.MAX_VALUE));
      cleanup.push(storageUnit);
      // With storage.durability: journal, the unit recovers its journal before the server listens.
      String role = "storage-unit-" + unit;
      UnitJournal journal =
          ConfigMapper.storageJournal(tq, role)
              .map(
                  settings ->
                      cleanup.push(UnitJournal.open(storageUnit, settings, role, Clock.SYSTEM)))
              .orElse(null);
      PrometheusMeterRegistry registry =
          tq.metrics().enabled() ? PrometheusEndpoint.newRegistry() : null;
      DistinctErrorLog errors = new DistinctErrorLog(System.getLogger("org.transferqueue.metrics"));
      StorageRequests requests =
          registry == null
              ? StorageRequests.NOOP
              : new StorageRequests(
                  new StorageRequestMeters(registry, List.of(storageUnit.id())),
                  storageUnit.id(),
                  Clock.SYSTEM,
                  errors);
      StorageUnitServer server =
          cleanup.push(StorageUnitServer.start(storageUnit, transport, allocator, requests));
      PrometheusEndpoint endpoint = null;
      MetricsCollector collector = null;
      if (registry != null) {
        StorageUnit measured = storageUnit;
        collector =
            MetricsCollector.forStorageUnits(
                registry,
                List.of(
                    () -> {
                      StorageUnitStats stats = measured.stats();
                      return new StorageUnitReport(
                          stats.unitId(),
                          stats.capacitySamples(),
                          stats.samples(),
                          ProcessMemory.rssBytes());
                    }),
                errors);
        cleanup.push(collector);
        collector.start(tq.metrics().collectInterval());
        // metrics.port is the controller's; every unit takes a free port, as the embedded units do.
        endpoint =
            RoleRunner.startMetrics(
                registry, collector, bind.host(), 0, "storage unit " + unit, LOG);
      }
      cleanup.release();
      return new RoleRunner.ServedRole(
          server.address(), endpoint, endpoint, collector, server, journal, storageUnit, allocator);
    }
  }
}
