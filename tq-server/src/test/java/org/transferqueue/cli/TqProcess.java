package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.transferqueue.config.HostPort;
import org.transferqueue.testing.Await;

/** A {@code tq} command in a child JVM with stdout and stderr in files; destroyed on close. */
final class TqProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("listening on (\\S+)");

  private final Process process;
  private final Path stdout;
  private final Path stderr;

  TqProcess(Path dir, String... args) throws IOException {
    this.stdout = dir.resolve("stdout.txt");
    this.stderr = dir.resolve("stderr.txt");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("--enable-native-access=ALL-UNNAMED");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(TqCommand.class.getName());
    command.addAll(List.of(args));
    this.process =
        new ProcessBuilder(command)
            .redirectOutput(stdout.toFile())
            .redirectError(stderr.toFile())
            .start();
  }

  /** Waits for the {@code listening on} line and returns the address it names. */
  HostPort awaitListening() {
    Await.until(() -> stdout().contains("\n") || !process.isAlive(), "the listening line");
    String line = stdout().lines().findFirst().orElse(null);
    assertThat(line).as("first line; stderr: %s", stderr()).isNotNull();
    Matcher m = LISTENING.matcher(line);
    assertThat(m.matches()).as(line).isTrue();
    HostPort address = HostPort.parse(m.group(1));
    assertThat(address.port()).isPositive();
    return address;
  }

  /** Sends SIGTERM and checks a clean stop: exit 0 (or 143) and no further output. */
  void terminateAndCheck() throws InterruptedException {
    process.destroy();
    assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as("exit status; stderr: %s", stderr()).isIn(0, 143);
    assertThat(stdout().lines()).as("stdout").hasSize(1);
    assertThat(stderr()).as("stderr").doesNotContain("Exception");
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
    process.destroyForcibly();
  }
}
