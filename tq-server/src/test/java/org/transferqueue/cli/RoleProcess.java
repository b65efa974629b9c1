package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.transferqueue.config.HostPort;
import org.transferqueue.server.process.ChildJvm;
import org.transferqueue.testing.Await;

/**
 * A {@code tq} role or another main class of the test's class path in a child JVM ({@link
 * ChildJvm}), with its stderr in a file of the test's directory and test-style failures
 * (AssertionError naming the child and its output). Killed with SIGKILL on close. Supports the
 * faults a test injects: {@link #kill()} (SIGKILL, as {@code kill -9}), {@link #pause()} (SIGSTOP)
 * and {@link #resume()} (SIGCONT).
 */
final class RoleProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("listening on (\\S+)");

  /** Small, quickly started JVMs: seven of them share two cores in the fault tests. */
  private static final List<String> SMALL_JVM =
      List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto");

  private final ChildJvm child;
  private final Path stderr;

  private RoleProcess(String name, Path dir, List<String> command) {
    try {
      Files.createDirectories(dir);
      this.stderr = Files.createTempFile(dir, name.replace(' ', '-') + "-", ".err");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.child = ChildJvm.start(name, command, ProcessBuilder.Redirect.to(stderr.toFile()));
  }

  /** Starts {@code tq ARGS} (the {@link TqCommand} main class) in a small JVM. */
  static RoleProcess tq(String name, Path dir, String... args) {
    return main(name, dir, TqCommand.class, args);
  }

  /** Starts {@code mainClass ARGS} in a small JVM. */
  static RoleProcess main(String name, Path dir, Class<?> mainClass, String... args) {
    return new RoleProcess(name, dir, ChildJvm.plainCommand(mainClass, SMALL_JVM, List.of(args)));
  }

  /**
   * Starts {@code mainClass ARGS} in a small JVM run by a wrapping command, e.g. {@code unshare
   * --pid --fork}: the wrapper's words come first, then the JVM's command line.
   */
  static RoleProcess wrapped(
      String name, Path dir, List<String> wrapper, Class<?> mainClass, String... args) {
    List<String> command = new java.util.ArrayList<>(wrapper);
    command.addAll(ChildJvm.plainCommand(mainClass, SMALL_JVM, List.of(args)));
    return new RoleProcess(name, dir, command);
  }

  /** Starts {@code tq ARGS} in a JVM with default options; its stderr file is in {@code dir}. */
  static RoleProcess role(Path dir, String... args) {
    return new RoleProcess(
        args.length == 0 ? "tq" : args[0],
        dir,
        ChildJvm.plainCommand(TqCommand.class, List.of(), List.of(args)));
  }

  String name() {
    return child.name();
  }

  long pid() {
    return child.pid();
  }

  boolean isAlive() {
    return child.isAlive();
  }

  /** Waits for a {@code listening on} line anywhere in stdout and returns its address. */
  HostPort awaitListening() {
    String line =
        await(l -> LISTENING.matcher(l).find(), "printing its listening line")
            .orElseThrow(
                () ->
                    new AssertionError(name() + " exited before listening; stderr:\n" + stderr()));
    Matcher m = LISTENING.matcher(line);
    if (!m.find()) {
      throw new AssertionError(name() + ": no address in " + line);
    }
    return HostPort.parse(m.group(1));
  }

  /**
   * Waits for the first line, checks that it is the {@code listening on} line, returns its address.
   */
  HostPort awaitListeningFirstLine() {
    String line = await(l -> true, "printing its first line").orElse(null);
    assertThat(line).as("first line; stderr: %s", stderr()).isNotNull();
    Matcher m = LISTENING.matcher(line);
    assertThat(m.matches()).as(line).isTrue();
    HostPort address = HostPort.parse(m.group(1));
    assertThat(address.port()).isPositive();
    return address;
  }

  /** Waits until stdout holds a line starting with {@code prefix} and returns that line. */
  String awaitLine(String prefix) {
    return await(l -> l.startsWith(prefix), "printing a line starting with '" + prefix + "'")
        .orElseThrow(
            () ->
                new AssertionError(
                    name()
                        + " exited without printing '"
                        + prefix
                        + "'; stdout:\n"
                        + stdout()
                        + "\nstderr:\n"
                        + stderr()));
  }

  /** The first line of stdout that starts with {@code prefix}. */
  Optional<String> line(String prefix) {
    return stdout().lines().filter(l -> l.startsWith(prefix)).findFirst();
  }

  /**
   * Waits for the process to exit.
   *
   * @return its exit status
   * @throws AssertionError if it is still running after {@code seconds}
   */
  int awaitExit(long seconds) {
    try {
      if (!child.awaitExit(Duration.ofSeconds(seconds))) {
        throw new AssertionError(
            name() + " still running after " + seconds + " s; stdout:\n" + stdout());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    return child.exitValue();
  }

  /** Sends SIGTERM and checks a clean stop: exit 0 (or 143) and no further output. */
  void terminateAndCheck() throws InterruptedException {
    child.terminate();
    assertThat(child.awaitExit(Duration.ofSeconds(30))).isTrue();
    assertThat(child.exitValue()).as("exit status; stderr: %s", stderr()).isIn(0, 143);
    assertThat(stdout().lines()).as("stdout").hasSize(1);
    assertThat(stderr()).as("stderr").doesNotContain("Exception");
  }

  /** Sends SIGKILL and waits until the process is gone. */
  void kill() {
    child.kill();
    awaitExit(30);
  }

  /** Sends SIGSTOP: the process keeps its sockets but runs no code. */
  void pause() {
    signal("STOP");
  }

  /** Sends SIGCONT. */
  void resume() {
    signal("CONT");
  }

  private void signal(String signal) {
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new AssertionError("kill -" + signal + " " + pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  String stdout() {
    return child.stdout();
  }

  String stderr() {
    try {
      return Files.readString(stderr);
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  private Optional<String> await(Predicate<String> matches, String what) {
    try {
      Optional<String> line = child.awaitLine(matches, Await.DEFAULT_TIMEOUT);
      if (line.isEmpty() && !child.outputEnded()) {
        throw new AssertionError(
            "timed out after " + Await.DEFAULT_TIMEOUT + ": " + name() + " " + what);
      }
      return line;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  @Override
  public void close() {
    // SIGKILL ends a stopped process as well: no SIGCONT needed.
    child.kill();
  }
}
