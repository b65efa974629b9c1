package org.transferqueue.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.transferqueue.config.HostPort;
import org.transferqueue.testing.Await;

/**
 * A main class in a child JVM of the test's class path, with stdout and stderr in files of its own
 * directory; killed with SIGKILL on close. Supports the faults a test injects: {@link #kill()}
 * (SIGKILL, as {@code kill -9}), {@link #pause()} (SIGSTOP) and {@link #resume()} (SIGCONT).
 */
final class ChildJvm implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("listening on (\\S+)");

  private final String name;
  private final Process process;
  private final Path stdout;
  private final Path stderr;

  private ChildJvm(String name, Path dir, String mainClass, List<String> args) {
    this.name = name;
    try {
      Files.createDirectories(dir);
      this.stdout = Files.createTempFile(dir, name.replace(' ', '-') + "-", ".out");
      this.stderr = stdout.resolveSibling(stdout.getFileName().toString().replace(".out", ".err"));
      List<String> command = new ArrayList<>();
      command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
      command.add("--enable-native-access=ALL-UNNAMED");
      // Small, quickly started JVMs: seven of them share two cores in the fault tests.
      command.add("-Xmx256m");
      command.add("-XX:+UseSerialGC");
      command.add("-XX:TieredStopAtLevel=1");
      command.add("-Xshare:auto");
      command.add("-cp");
      command.add(System.getProperty("java.class.path"));
      command.add(mainClass);
      command.addAll(args);
      this.process =
          new ProcessBuilder(command)
              .redirectOutput(stdout.toFile())
              .redirectError(stderr.toFile())
              .start();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts {@code tq ARGS} (the {@link TqCommand} main class). */
  static ChildJvm tq(String name, Path dir, String... args) {
    return new ChildJvm(name, dir, TqCommand.class.getName(), List.of(args));
  }

  /** Starts {@code mainClass ARGS}. */
  static ChildJvm main(String name, Path dir, Class<?> mainClass, String... args) {
    return new ChildJvm(name, dir, mainClass.getName(), List.of(args));
  }

  String name() {
    return name;
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** Waits for the {@code listening on} line and returns its address. */
  HostPort awaitListening() {
    Await.until(
        () -> LISTENING.matcher(stdout()).find() || !process.isAlive(),
        name + " printing its listening line");
    Matcher m = LISTENING.matcher(stdout());
    if (!m.find()) {
      throw new AssertionError(name + " exited before listening; stderr:\n" + stderr());
    }
    return HostPort.parse(m.group(1));
  }

  /** Waits until stdout holds a line starting with {@code prefix} and returns that line. */
  String awaitLine(String prefix) {
    Await.until(
        () -> line(prefix).isPresent() || !process.isAlive(),
        name + " printing a line starting with '" + prefix + "'");
    return line(prefix)
        .orElseThrow(
            () ->
                new AssertionError(
                    name
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
      if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
        throw new AssertionError(
            name + " still running after " + seconds + " s; stdout:\n" + stdout());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    return process.exitValue();
  }

  /** Sends SIGKILL and waits until the process is gone. */
  void kill() {
    process.destroyForcibly();
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
    return read(stdout);
  }

  String stderr() {
    return read(stderr);
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      return "(unreadable: " + e + ")";
    }
  }

  @Override
  public void close() {
    // SIGKILL ends a stopped process as well: no SIGCONT needed.
    process.destroyForcibly();
  }
}
