package org.transferqueue.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.transferqueue.client.ControllerSettings;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerClock;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.remote.ControllerServer;
import org.transferqueue.server.config.TqConfigs;
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
  public Integer call() throws InterruptedException {
    TqConfig tq = TqConfigs.load(config, System.getenv());
    int port = tq.network().controllerAddress().map(HostPort::port).orElse(0);
    TransportConfig transport = TransportConfig.builder(tq.network()).bindPort(port).build();
    Controller controller =
        new Controller(
            ControllerSettings.from(tq),
            TransferQueueSystem.samplerNamed(tq.controller().sampler()),
            ControllerClock.SYSTEM);
    RootAllocator allocator = RootAllocator.builder().name("tq-controller").build();
    ControllerServer server;
    try {
      server = ControllerServer.start(controller, transport, allocator);
    } catch (RuntimeException e) {
      allocator.close();
      throw e;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            Thread.ofPlatform()
                .name("tq-controller-shutdown")
                .unstarted(
                    () -> {
                      try (allocator) {
                        server.close();
                      } finally {
                        stopped.countDown();
                      }
                    }));
    PrintWriter out = spec.commandLine().getOut();
    out.println("listening on " + server.address());
    out.flush();
    stopped.await();
    return 0;
  }
}
