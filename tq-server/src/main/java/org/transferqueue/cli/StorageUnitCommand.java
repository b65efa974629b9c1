package org.transferqueue.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.remote.StorageUnitServer;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.transport.TransportConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq storage-unit}: serves one SimpleStorage unit on the address {@code
 * network.storage_unit_addresses[N]} of the configuration file (port 0 picks a free port), with the
 * per-unit capacity of {@code backend.SimpleStorage} and the byte limit of {@code memory}.
 */
@Command(name = "storage-unit", description = "Serve one SimpleStorage unit until SIGTERM/SIGINT.")
final class StorageUnitCommand implements Callable<Integer> {
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
    TqConfig tq = RoleRunner.load(commandLine, config);
    HostPort address =
        RoleRunner.address(
            commandLine,
            tq.network().storageUnitAddresses(),
            NetworkConfig.STORAGE_UNIT_ADDRESSES_PROP_NAME,
            "--unit",
            unit);
    TransportConfig transport =
        TransportConfig.builder(tq.network())
            .bindHost(address.host())
            .bindPort(address.port())
            .build();
    RootAllocator allocator = RoleRunner.allocator(tq, "tq-storage-unit-" + unit);
    StorageUnit storageUnit = null;
    try {
      storageUnit =
          new StorageUnit(
              "TQ_STORAGE_UNIT_" + unit,
              tq.backend().simpleStorage().perUnitCapacity(),
              allocator,
              tq.memory().storageUnitLimitBytes().orElse(Long.MAX_VALUE));
      StorageUnitServer server = StorageUnitServer.start(storageUnit, transport, allocator);
      StorageUnit owned = storageUnit;
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
                  owned;
                  server) {
                // closes the server, then the unit, then the allocator
              }
            }
          });
    } catch (RuntimeException e) {
      if (storageUnit != null) {
        storageUnit.close();
      }
      allocator.close();
      throw e;
    }
  }
}
