package org.transferqueue.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.transferqueue.client.ControllerSettings;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerClock;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.remote.ControllerServer;
import org.transferqueue.transport.TransportConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq controller}: runs the controller of a multi-process deployment. It binds {@code
 * network.bind_host} on the port of {@code network.controller_address} (an ephemeral port when no
 * address is configured), prints exactly one line {@code listening on HOST:PORT} once it accepts
 * requests, and serves until the process receives SIGTERM or SIGINT, when a shutdown hook closes
 * the server and releases its memory.
 */
@Command(
    name = "controller",
    description = "Run the controller role; prints 'listening on HOST:PORT' when ready.")
final class ControllerCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", required = true, description = "YAML configuration file.")
  Path config;

  @Override
  public Integer call() {
    CommandLine commandLine = spec.commandLine();
    TqConfig tq = RoleRunner.load(commandLine, config);
    int port = tq.network().controllerAddress().map(HostPort::port).orElse(0);
    TransportConfig transport = TransportConfig.builder(tq.network()).bindPort(port).build();
    Controller controller =
        new Controller(
            ControllerSettings.from(tq),
            TransferQueueSystem.samplerNamed(tq.controller().sampler()),
            ControllerClock.SYSTEM);
    RootAllocator allocator = RoleRunner.allocator(tq, "tq-controller");
    ControllerServer server;
    try {
      server = ControllerServer.start(controller, transport, allocator);
    } catch (RuntimeException e) {
      allocator.close();
      throw e;
    }
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
                server) {
              // closes the server, then the allocator
            }
          }
        });
  }
}
