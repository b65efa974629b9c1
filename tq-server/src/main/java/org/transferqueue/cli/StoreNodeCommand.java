package org.transferqueue.cli;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.transferqueue.Clock;
import org.transferqueue.CloseStack;
import org.transferqueue.DistinctErrorLog;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.memory.SharedMemoryPool;
import org.transferqueue.metrics.StorageRequestMeters;
import org.transferqueue.metrics.StorageRequests;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.NodeJournal;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.server.metrics.PrometheusEndpoint;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.transport.TransportConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq store-node}: serves one object-store node on {@code network.bind_host} and the port of
 * {@code network.store_node_addresses[N]} (port 0 picks a free port; the address is what clients
 * connect to and the node's name in the store); the node contributes {@code
 * backend.MooncakeStore.global_segment_size} bytes and copies with a local buffer of {@code
 * local_buffer_size}.
 */
@Command(name = "store-node", description = "Serve one object-store node until SIGTERM/SIGINT.")
final class StoreNodeCommand implements Callable<Integer> {
  private static final System.Logger LOG = System.getLogger(StoreNodeCommand.class.getName());

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", required = true, description = "The YAML configuration file.")
  Path config;

  @Option(
      names = "--node",
      required = true,
      description = "Index into network.store_node_addresses.")
  int node;

  @Override
  public Integer call() {
    CommandLine commandLine = spec.commandLine();
    TqConfig tq = RoleRunner.loadRole(commandLine, config);
    HostPort address =
        RoleRunner.address(
            commandLine,
            tq.network().storeNodeAddresses(),
            NetworkConfig.STORE_NODE_ADDRESSES_PROP_NAME,
            "--node",
            node);
    try {
      return RoleRunner.serve(commandLine.getOut(), start(tq, address, node));
    } catch (TqException e) {
      throw new CommandLine.ExecutionException(commandLine, e.getMessage(), e);
    }
  }

  /**
   * Starts the store-node role: the engine, its server and, when {@code metrics.enabled} is true, a
   * Prometheus endpoint on {@code network.bind_host} and a free port exporting the node's request
   * meters by {@code op_type} ({@code tq_storage_request_total} and its siblings, {@code
   * storage_unit_id} = {@code TQ_STORE_NODE_<node>}; writes as {@code PUT_DATA}, reads as {@code
   * GET_DATA}, removals as {@code CLEAR_DATA}). The endpoint's address is logged, not printed. With
   * {@code storage.durability: journal} the engine first recovers from {@code
   * <durability.journal_dir>/store-node-<node>} (last checkpoint plus journal tail), and closing
   * the role writes a final checkpoint.
   *
   * @param tq the configuration
   * @param address the node's configured address: clients connect to it, the server takes its port
   * @param node the node's index
   * @return the started role; the caller closes it
   * @throws TqException {@code INVALID_CONFIGURATION} when the engine refuses the sizes or the
   *     address cannot be served, {@code CORRUPT_DATA} naming file and offset when the journal is
   *     damaged; nothing is left open then
   */
  static RoleRunner.ServedRole start(TqConfig tq, HostPort address, int node) {
    MooncakeStoreConfig mooncake = tq.backend().mooncakeStore();
    StoreConfig storeConfig =
        StoreConfig.builder()
            .localHostname(address.toString())
            .globalSegmentSize(mooncake.globalSegmentSize())
            .localBufferSize(mooncake.localBufferSize())
            .build();
    HostPort bind =
        tq.network()
            .bindAddress(
                Optional.of(address),
                NetworkConfig.STORE_NODE_ADDRESSES_PROP_NAME + "[" + node + "]");
    TransportConfig transport =
        ConfigMapper.transportBuilder(tq.network())
            .bindHost(bind.host())
            .bindPort(bind.port())
            .build();
    try (CloseStack cleanup = new CloseStack()) {
      RootAllocator allocator = cleanup.push(RoleRunner.allocator(tq, "tq-store-node-" + node));
      // With shared memory on, the engine's slabs lie in the server's pool: same-host clients
      // then read objects where they lie and write them where they are kept.
      SharedMemoryPool sharedMemory =
          StoreNodeServer.newSharedMemoryPool(transport, allocator, storeConfig.localHostname());
      if (sharedMemory != null) {
        cleanup.push(sharedMemory);
      }
      EmbeddedObjectStore engine =
          cleanup.push(
              EmbeddedObjectStore.create(allocator, ConfigMapper.master(mooncake), sharedMemory));
      int rc = engine.setup(storeConfig);
      if (rc != 0) {
        throw new TqException(
            ErrorCode.INVALID_CONFIGURATION,
            "store node setup failed with code "
                + rc
                + " for global_segment_size="
                + mooncake.globalSegmentSize()
                + ", local_buffer_size="
                + mooncake.localBufferSize());
      }
      // With storage.durability: journal, the node recovers its journal before the server listens.
      String role = "store-node-" + node;
      NodeJournal journal =
          ConfigMapper.storageJournal(tq, role)
              .map(settings -> cleanup.push(NodeJournal.open(engine, settings, role, Clock.SYSTEM)))
              .orElse(null);
      StorageRequests requests = StorageRequests.NOOP;
      PrometheusMeterRegistry registry = null;
      if (tq.metrics().enabled()) {
        registry = PrometheusEndpoint.newRegistry();
        String nodeId = "TQ_STORE_NODE_" + node;
        requests =
            new StorageRequests(
                new StorageRequestMeters(registry, List.of(nodeId)),
                nodeId,
                Clock.SYSTEM,
                new DistinctErrorLog(System.getLogger("org.transferqueue.metrics")));
      }
      StoreNodeServer server =
          cleanup.push(StoreNodeServer.start(engine, transport, allocator, requests, sharedMemory));
      // metrics.port is the controller's; every node takes a free port, as storage units do.
      PrometheusEndpoint endpoint =
          registry == null
              ? null
              : RoleRunner.startMetrics(registry, null, bind.host(), 0, "store node " + node, LOG);
      cleanup.release();
      return new RoleRunner.ServedRole(
          server.address(), endpoint, endpoint, server, journal, engine, sharedMemory, allocator);
    }
  }
}
