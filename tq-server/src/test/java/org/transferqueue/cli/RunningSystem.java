package org.transferqueue.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Collectors;
import org.transferqueue.config.HostPort;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.transport.TransportConfig;
import picocli.CommandLine;

/**
 * A controller server and storage-unit servers on ephemeral loopback ports in the test JVM (the
 * classes {@code tq controller} and {@code tq storage-unit} run), with a configuration file naming
 * their addresses, and a way to run {@code tq} commands in-process against them.
 */
final class RunningSystem implements AutoCloseable {
  /** What a command printed and returned. */
  record Result(int status, String out, String err) {}

  final Controller controller = new Controller(ControllerOptions.defaults());
  final List<StorageUnit> units = new ArrayList<>();
  private final List<StorageUnitServer> unitServers = new ArrayList<>();
  private final ControllerServer controllerServer;
  final Path config;

  RunningSystem(BufferAllocator allocator, Path dir, int unitCount) {
    TransportConfig loopback = TransportConfig.builder().bindHost("127.0.0.1").bindPort(0).build();
    controllerServer = ControllerServer.start(controller, loopback, allocator);
    try {
      for (int i = 0; i < unitCount; i++) {
        StorageUnit unit =
            new StorageUnit("TQ_STORAGE_UNIT_" + i, OptionalLong.empty(), allocator, 1L << 26);
        units.add(unit);
        unitServers.add(StorageUnitServer.start(unit, loopback, allocator));
      }
      config = dir.resolve("tq.yaml");
      Files.writeString(
          config,
          "network:\n"
              + "  controller_address: \""
              + controllerServer.address()
              + "\"\n"
              + "  storage_unit_addresses: ["
              + unitServers.stream()
                  .map(s -> "\"" + s.address() + "\"")
                  .collect(Collectors.joining(", "))
              + "]\n",
          StandardCharsets.UTF_8);
    } catch (IOException e) {
      close();
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The addresses of the storage-unit servers, in unit order. */
  List<HostPort> unitAddresses() {
    return unitServers.stream().map(StorageUnitServer::address).toList();
  }

  /** Stops the server of unit {@code i} (the unit keeps its cells until {@link #close}). */
  void closeUnitServer(int i) {
    unitServers.get(i).close();
  }

  /**
   * Runs {@code tq ARGS} in-process; {@code --config FILE} is appended to commands that take it.
   */
  Result tq(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.add("--config");
    all.add(config.toString());
    return run(all.toArray(String[]::new));
  }

  /** Runs {@code tq ARGS} in-process exactly as given. */
  static Result run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine commandLine = TqCommand.newCommandLine();
    commandLine.setOut(new PrintWriter(out, true));
    commandLine.setErr(new PrintWriter(err, true));
    int status = commandLine.execute(args);
    return new Result(status, out.toString(), err.toString());
  }

  @Override
  public void close() {
    unitServers.reversed().forEach(StorageUnitServer::close);
    units.reversed().forEach(StorageUnit::close);
    if (controllerServer != null) {
      controllerServer.close();
    }
  }
}
