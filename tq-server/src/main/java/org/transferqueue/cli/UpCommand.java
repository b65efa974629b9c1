package org.transferqueue.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.transferqueue.Clock;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.process.ChildJvm;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq up}: starts every role of a configuration file on this host, each as a child process
 * running {@code tq <role>} with the same JDK and class path: the controller, then one storage unit
 * per entry of {@code network.storage_unit_addresses} and one object-store node per entry of {@code
 * network.store_node_addresses}. Prints one line {@code <role> listening on HOST:PORT} per role
 * once all are ready, then runs until SIGTERM/SIGINT (Ctrl-C), when it stops every child (SIGTERM,
 * then a forced kill after a grace period). If a role fails to start or a child exits on its own,
 * the others are stopped and the command exits with status 1.
 */
@Command(
    name = "up",
    description = "Start every role of the configuration file on this host; Ctrl-C stops them.")
final class UpCommand implements Callable<Integer> {
  private static final System.Logger LOG = System.getLogger(UpCommand.class.getName());
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration STOP_GRACE = Duration.ofSeconds(10);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", required = true, description = "YAML configuration file.")
  Path config;

  /** One role to start: its name for the output and its {@code tq} arguments. */
  record Role(String name, List<String> arguments) {}

  /** The roles of a configuration, in start order. */
  static List<Role> roles(TqConfig tq, Path file) {
    List<Role> roles = new ArrayList<>();
    roles.add(new Role("controller", List.of("controller", "--config", file.toString())));
    for (int i = 0; i < tq.network().storageUnitAddresses().size(); i++) {
      roles.add(
          new Role(
              "storage-unit " + i,
              List.of("storage-unit", "--config", file.toString(), "--unit", Integer.toString(i))));
    }
    for (int i = 0; i < tq.network().storeNodeAddresses().size(); i++) {
      roles.add(
          new Role(
              "store-node " + i,
              List.of("store-node", "--config", file.toString(), "--node", Integer.toString(i))));
    }
    return roles;
  }

  @Override
  public Integer call() throws InterruptedException {
    CommandLine commandLine = spec.commandLine();
    TqConfig tq = RoleRunner.loadRole(commandLine, config);
    PrintWriter out = commandLine.getOut();
    PrintWriter err = commandLine.getErr();
    List<Process> children = new ArrayList<>();
    AtomicBoolean stopping = new AtomicBoolean();
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            Thread.ofPlatform()
                .name("tq-up-shutdown")
                .unstarted(
                    () -> {
                      stopping.set(true);
                      try {
                        stopAll(children);
                      } finally {
                        stopped.countDown();
                      }
                    }));
    List<String> ready = new ArrayList<>();
    try {
      for (Role role : roles(tq, config.toAbsolutePath())) {
        List<String> command =
            ChildJvm.command(
                TqCommand.class,
                List.of(
                    // The roles must not repeat the configuration warnings this process logged.
                    "-D" + RoleRunner.CHILD_OF_UP_PROPERTY + "=true",
                    // A role lives no longer than this process, even when it is killed (SIGKILL).
                    "-D" + ParentWatch.PROPERTY + "=" + ProcessHandle.current().pid()),
                role.arguments());
        Process child;
        synchronized (children) {
          if (stopping.get()) {
            return 0;
          }
          child =
              new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
          children.add(child);
        }
        ready.add(role.name() + " " + awaitReady(role, child));
      }
    } catch (IOException | RuntimeException e) {
      err.println("tq up: " + e.getMessage());
      err.flush();
      stopAll(children);
      return 1;
    }
    ready.forEach(out::println);
    out.flush();
    CompletableFuture<Object> anyExit =
        CompletableFuture.anyOf(
            children.stream().map(Process::onExit).toArray(CompletableFuture[]::new));
    try {
      anyExit.get();
    } catch (ExecutionException e) {
      throw new IllegalStateException("waiting for children failed", e);
    }
    if (stopping.get()) {
      stopped.await();
      return 0;
    }
    Process gone = (Process) anyExit.getNow(null);
    err.println(
        "tq up: child " + gone.pid() + " exited with status " + gone.exitValue() + "; stopping");
    err.flush();
    stopAll(children);
    return 1;
  }

  /** Reads the child's {@code listening on} line within the start timeout; drains the rest. */
  private static String awaitReady(Role role, Process child) {
    BufferedReader reader =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<String> line = new CompletableFuture<>();
    Thread.ofVirtual()
        .name("tq-up-" + role.name())
        .start(
            () -> {
              try {
                line.complete(reader.readLine());
                while (reader.readLine() != null) {
                  // Roles print one line; anything more is not ours to show.
                }
              } catch (IOException e) {
                line.completeExceptionally(e);
              }
            });
    String first;
    try {
      first = line.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new IllegalStateException(role.name() + " did not start within " + START_TIMEOUT);
    } catch (ExecutionException e) {
      throw new IllegalStateException(role.name() + ": " + e.getCause().getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(role.name() + ": interrupted while starting");
    }
    if (first == null || !first.startsWith("listening on ")) {
      throw new IllegalStateException(
          role.name() + " failed to start (its errors are above); first output line: " + first);
    }
    return first;
  }

  /** Asks every child to stop (SIGTERM), then kills those still alive after the grace period. */
  private static void stopAll(List<Process> children) {
    List<Process> snapshot;
    synchronized (children) {
      snapshot = List.copyOf(children);
    }
    snapshot.forEach(p -> p.toHandle().destroy());
    long deadline = Clock.SYSTEM.nanoTime() + STOP_GRACE.toNanos();
    for (Process p : snapshot) {
      try {
        long left = deadline - Clock.SYSTEM.nanoTime();
        if (!p.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS)) {
          LOG.log(System.Logger.Level.WARNING, "child " + p.pid() + " did not stop; killing it");
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        p.destroyForcibly();
      }
    }
  }
}
