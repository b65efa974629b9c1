package org.transferqueue.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.StoreNodeServer;
import org.transferqueue.transport.TransportConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq store-node}: serves one object-store node on the address {@code
 * network.store_node_addresses[N]} of the configuration file (port 0 picks a free port); the node
 * contributes {@code backend.MooncakeStore.global_segment_size} bytes and copies with a local
 * buffer of {@code local_buffer_size}.
 */
@Command(name = "store-node", description = "Serve one object-store node until SIGTERM/SIGINT.")
final class StoreNodeCommand implements Callable<Integer> {
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
    TqConfig tq = RoleRunner.load(commandLine, config);
    HostPort address =
        RoleRunner.address(
            commandLine,
            tq.network().storeNodeAddresses(),
            NetworkConfig.STORE_NODE_ADDRESSES_PROP_NAME,
            "--node",
            node);
    MooncakeStoreConfig mooncake = tq.backend().mooncakeStore();
    StoreConfig storeConfig =
        StoreConfig.builder()
            .localHostname(address.toString())
            .globalSegmentSize(mooncake.globalSegmentSize())
            .localBufferSize(mooncake.localBufferSize())
            .build();
    TransportConfig transport =
        TransportConfig.builder(tq.network())
            .bindHost(address.host())
            .bindPort(address.port())
            .build();
    RootAllocator allocator = RoleRunner.allocator(tq, "tq-store-node-" + node);
    EmbeddedObjectStore engine = EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT);
    try {
      int rc = engine.setup(storeConfig);
      if (rc != 0) {
        throw new CommandLine.ExecutionException(
            commandLine,
            "store node setup failed with code "
                + rc
                + " for global_segment_size="
                + mooncake.globalSegmentSize()
                + ", local_buffer_size="
                + mooncake.localBufferSize());
      }
      StoreNodeServer server = StoreNodeServer.start(engine, transport, allocator);
      return RoleRunner.serve(
          commandLine.getOut(),
          new RoleRunner.Role() {
            @Override
            public HostPort address() {
              return server.address();
            }

            @Override
            public void close() {
              try (allocator;
                  engine;
                  server) {
                // closes the server, then the engine, then the allocator
              }
            }
          });
    } catch (RuntimeException e) {
      engine.close();
      allocator.close();
      throw e;
    }
  }
}
