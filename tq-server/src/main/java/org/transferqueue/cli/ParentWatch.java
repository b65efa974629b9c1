package org.transferqueue.cli;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Ends a server role when the process that started it ends: a launcher (the Python client, a Ray
 * actor) passes its process id as the system property {@value #PROPERTY}, and the role stops,
 * through its shutdown hook, once that process is gone, even when the launcher was killed without a
 * chance to stop its children.
 */
final class ParentWatch {
  /** The system property naming the process id the role lives no longer than. */
  static final String PROPERTY = "tq.parent.pid";

  private static final System.Logger LOG = System.getLogger(ParentWatch.class.getName());

  private ParentWatch() {}

  /**
   * Watches the process named by {@value #PROPERTY}, if set.
   *
   * @param value the property's value, or null when unset
   * @param onExit run once when the process has ended (at once if it is gone already)
   * @return the watch, completed after {@code onExit} ran; empty when {@code value} is null
   * @throws TqException {@code INVALID_ARGUMENT} naming a value that is not a process id
   */
  static Optional<CompletableFuture<Void>> watch(String value, Runnable onExit) {
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    long pid;
    try {
      pid = Long.parseLong(value.strip());
    } catch (NumberFormatException e) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "-D" + PROPERTY + "=" + value + " is not a process id");
    }
    if (pid <= 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "-D" + PROPERTY + "=" + value + " is not a process id");
    }
    CompletableFuture<?> exited =
        ProcessHandle.of(pid)
            .<CompletableFuture<?>>map(ProcessHandle::onExit)
            .orElseGet(() -> CompletableFuture.completedFuture(null));
    return Optional.of(
        exited.thenRun(
            () -> {
              LOG.log(System.Logger.Level.WARNING, "parent process " + pid + " ended: stopping");
              onExit.run();
            }));
  }

  /**
   * Exits the JVM (running the role's shutdown hook) when the process named by {@value #PROPERTY}
   * ends.
   */
  static void exitWithParent() {
    watch(System.getProperty(PROPERTY), () -> System.exit(0));
  }
}
