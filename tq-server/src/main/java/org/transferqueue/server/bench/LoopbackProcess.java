package org.transferqueue.server.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;

/**
 * A server child process of a loopback case: started from a command line, ready once it printed
 * {@code listening on HOST:PORT} as its first line (the rest of its output is drained), its errors
 * kept in a file. Closing stops it (SIGTERM, then a forced kill after a grace period). Not
 * thread-safe.
 */
final class LoopbackProcess implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(LoopbackProcess.class.getName());
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration STOP_GRACE = Duration.ofSeconds(10);
  private static final String LISTENING = "listening on ";

  private final String name;
  private final Process process;
  private final HostPort address;

  private LoopbackProcess(String name, Process process, HostPort address) {
    this.name = name;
    this.process = process;
    this.address = address;
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
    Process process;
    try {
      process =
          new ProcessBuilder(command)
              .redirectError(ProcessBuilder.Redirect.appendTo(errors.toFile()))
              .start();
    } catch (IOException e) {
      throw new TqException(
          ErrorCode.CONNECTION_FAILED, name + ": cannot start: " + e.getMessage(), e);
    }
    BufferedReader reader =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<String> first = new CompletableFuture<>();
    Thread.ofVirtual()
        .name("bench-" + name)
        .start(
            () -> {
              try {
                first.complete(reader.readLine());
                while (reader.readLine() != null) {
                  // Only the first line is ours to read.
                }
              } catch (IOException e) {
                first.completeExceptionally(e);
              }
            });
    String line;
    try {
      line = first.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      stop(process);
      throw new TqException(
          ErrorCode.CONNECTION_FAILED,
          name + " did not start within " + START_TIMEOUT + "; its errors: " + tail(errors));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop(process);
      throw new TqException(ErrorCode.CONNECTION_FAILED, name + ": interrupted while starting");
    }
    if (line == null || !line.startsWith(LISTENING)) {
      stop(process);
      throw new TqException(
          ErrorCode.CONNECTION_FAILED,
          name + " failed to start; first line: " + line + "; its errors: " + tail(errors));
    }
    return new LoopbackProcess(
        name, process, HostPort.parse(line.substring(LISTENING.length()).trim()));
  }

  /**
   * The address the child listens on.
   *
   * @return the address of its {@code listening on} line
   */
  long pid() {
    return process.pid();
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
    return name;
  }

  /**
   * The child's peak resident memory so far, from {@code VmHWM} in {@code /proc/<pid>/status}.
   *
   * @return bytes, or -1 when unknown (not Linux, or the child has exited)
   */
  long peakRssBytes() {
    return PeakRss.peakRssBytes(process.pid());
  }

  @Override
  public void close() {
    if (!stop(process)) {
      LOG.log(System.Logger.Level.WARNING, name + " did not stop within " + STOP_GRACE);
    }
  }

  /** SIGTERM, then a forced kill after the grace period; true when it stopped in time. */
  private static boolean stop(Process process) {
    process.destroy();
    try {
      if (process.waitFor(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
        return true;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process.destroyForcibly();
    return false;
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
