package org.transferqueue.server.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.server.process.ChildJvm;

/**
 * A server child process of a loopback case: started from a command line, ready once it printed
 * {@code listening on HOST:PORT} as its first line (the rest of its output is drained), its errors
 * kept in a file. Closing stops it (SIGTERM, then a forced kill after a grace period); {@link
 * #kill} and {@link #restart} serve {@code tq stress --chaos}. Not thread-safe.
 */
final class LoopbackProcess implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(LoopbackProcess.class.getName());
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private final ChildJvm child;
  private final HostPort address;
  private final List<String> command;
  private final Path errors;

  private LoopbackProcess(ChildJvm child, HostPort address, List<String> command, Path errors) {
    this.child = child;
    this.address = address;
    this.command = List.copyOf(command);
    this.errors = errors;
  }

  /**
   * Starts a child and waits for its {@code listening on} line.
   *
   * @param name what to call the child in messages, e.g. {@code storage-unit 0}
   * @param command the command line
   * @param errors the file its standard error goes to
   * @return the running child
   * @throws TqException {@code CONNECTION_FAILED} when it cannot start, exits or prints something
   *     else first, or does not start within the timeout; the child is stopped then
   */
  static LoopbackProcess start(String name, List<String> command, Path errors) {
    ChildJvm child =
        ChildJvm.start(name, command, ProcessBuilder.Redirect.appendTo(errors.toFile()));
    Optional<String> first;
    try {
      first = child.awaitLine(line -> true, START_TIMEOUT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      child.close();
      throw new TqException(ErrorCode.CONNECTION_FAILED, name + ": interrupted while starting");
    }
    if (first.isEmpty() && !child.outputEnded()) {
      child.close();
      throw new TqException(
          ErrorCode.CONNECTION_FAILED,
          name + " did not start within " + START_TIMEOUT + "; its errors: " + tail(errors));
    }
    String line = first.orElse(null);
    if (line == null || !line.startsWith(ChildJvm.LISTENING)) {
      child.close();
      throw new TqException(
          ErrorCode.CONNECTION_FAILED,
          name + " failed to start; first line: " + line + "; its errors: " + tail(errors));
    }
    return new LoopbackProcess(
        child, HostPort.parse(line.substring(ChildJvm.LISTENING.length()).trim()), command, errors);
  }

  /**
   * Starts this child's command again (after {@link #kill}), its errors appended to the same file,
   * and waits for its {@code listening on} line.
   *
   * @return the new child
   * @throws TqException {@code CONNECTION_FAILED} as {@link #start}
   */
  LoopbackProcess restart() {
    return start(child.name(), command, errors);
  }

  /**
   * Kills the child with SIGKILL (no shutdown hook runs, nothing is flushed) and waits until it has
   * exited, so that its port and files are free.
   *
   * @throws TqException {@code ILLEGAL_STATE} when it has not exited within the stop grace period
   */
  void kill() {
    child.kill();
    boolean exited;
    try {
      exited = child.awaitExit(ChildJvm.STOP_GRACE);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exited = false;
    }
    if (!exited) {
      throw new TqException(
          ErrorCode.ILLEGAL_STATE, child.name() + " did not exit within " + ChildJvm.STOP_GRACE);
    }
  }

  /**
   * Whether the child is running.
   *
   * @return false once it exited
   */
  boolean isAlive() {
    return child.isAlive();
  }

  /**
   * The child's process id.
   *
   * @return the pid
   */
  long pid() {
    return child.pid();
  }

  /** The address from the child's {@code listening on} line. */
  HostPort address() {
    return address;
  }

  /**
   * The name given at start.
   *
   * @return e.g. {@code storage-unit 0}
   */
  String name() {
    return child.name();
  }

  /**
   * The child's peak resident memory so far, from {@code VmHWM} in {@code /proc/<pid>/status}.
   *
   * @return bytes, or -1 when unknown (not Linux, or the child has exited)
   */
  long peakRssBytes() {
    return PeakRss.peakRssBytes(child.pid());
  }

  @Override
  public void close() {
    if (!child.stop(ChildJvm.STOP_GRACE)) {
      LOG.log(
          System.Logger.Level.WARNING,
          child.name() + " did not stop within " + ChildJvm.STOP_GRACE);
    }
  }

  private static String tail(Path errors) {
    try {
      String text = Files.readString(errors);
      return text.length() <= 2000 ? text : text.substring(text.length() - 2000);
    } catch (IOException e) {
      return "(unreadable: " + e.getMessage() + ")";
    }
  }
}
