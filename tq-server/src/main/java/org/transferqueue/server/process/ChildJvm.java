package org.transferqueue.server.process;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A main class of this class path running in a child JVM with the same JDK.
 *
 * <p>{@link #command} and {@link #plainCommand} build the command line {@code java [options] -cp
 * <class path> Main args}; {@link #start} runs it. The child's standard output is read by a virtual
 * thread into memory (the first {@value #KEPT_CHARS} characters are kept, the rest is read and
 * dropped, so the child never blocks on a full pipe); {@link #awaitLine} waits for a line by a
 * deadline, for example the {@value #LISTENING} line every {@code tq} role prints once it serves.
 * {@link #stop} asks the child to stop (SIGTERM) and kills it after a grace period; {@link #kill}
 * kills it at once.
 *
 * <p>Thread-safe.
 */
public final class ChildJvm implements AutoCloseable {
  /** The prefix of the ready line of a {@code tq} role: {@code listening on HOST:PORT}. */
  public static final String LISTENING = "listening on ";

  /** How long {@link #close()} waits after SIGTERM before it kills the child. */
  public static final Duration STOP_GRACE = Duration.ofSeconds(10);

  static final int KEPT_CHARS = 1 << 20;

  private final String name;
  private final Process process;
  private final Clock clock;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final StringBuilder output = new StringBuilder();
  private final List<String> lines = new ArrayList<>();
  private final Thread reader;
  private boolean outputEnded;

  private ChildJvm(String name, Process process, Clock clock) {
    this.name = name;
    this.process = process;
    this.clock = clock;
    this.reader = Thread.ofVirtual().name("child-" + name).start(this::readOutput);
  }

  /**
   * The command line of a child JVM that also runs with this JVM's options (heap, system
   * properties, native access; a debugger agent is left out, its port can be bound only once).
   *
   * @param mainClass the class whose {@code main} runs
   * @param jvmOptions further JVM options, after the inherited ones
   * @param args the program arguments
   * @return java executable, JVM options, class path, main class and arguments
   */
  public static List<String> command(
      Class<?> mainClass, List<String> jvmOptions, List<String> args) {
    List<String> inherited = new ArrayList<>();
    for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (!option.startsWith("-agentlib:jdwp") && !option.startsWith("-Xrunjdwp")) {
        inherited.add(option);
      }
    }
    inherited.addAll(jvmOptions);
    return plainCommand(mainClass, inherited, args);
  }

  /**
   * The command line of a child JVM with only the given options (and native access).
   *
   * @param mainClass the class whose {@code main} runs
   * @param jvmOptions the JVM options
   * @param args the program arguments
   * @return java executable, JVM options, class path, main class and arguments
   */
  public static List<String> plainCommand(
      Class<?> mainClass, List<String> jvmOptions, List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    if (jvmOptions.stream().noneMatch(option -> option.startsWith("--enable-native-access"))) {
      command.add("--enable-native-access=ALL-UNNAMED");
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass.getName());
    command.addAll(args);
    return command;
  }

  /**
   * Starts a child.
   *
   * @param name what to call the child in messages, e.g. {@code storage-unit 0}
   * @param command the command line, usually from {@link #command} or {@link #plainCommand}
   * @param stderr where the child's standard error goes
   * @return the running child, whose output is being read
   * @throws TqException with {@code CONNECTION_FAILED} if the process cannot be started
   */
  public static ChildJvm start(String name, List<String> command, ProcessBuilder.Redirect stderr) {
    Objects.requireNonNull(name, "name");
    Process process;
    try {
      process = new ProcessBuilder(command).redirectError(stderr).start();
    } catch (IOException e) {
      throw new TqException(
          ErrorCode.CONNECTION_FAILED, name + ": cannot start: " + e.getMessage(), e);
    }
    return new ChildJvm(name, process, Clock.SYSTEM);
  }

  /**
   * The name given at start.
   *
   * @return e.g. {@code storage-unit 0}
   */
  public String name() {
    return name;
  }

  /**
   * The child's process id.
   *
   * @return the pid
   */
  public long pid() {
    return process.pid();
  }

  /**
   * Whether the child is still running.
   *
   * @return true until it exits
   */
  public boolean isAlive() {
    return process.isAlive();
  }

  /**
   * The child's exit status.
   *
   * @return the status
   * @throws IllegalThreadStateException if it is still running
   */
  public int exitValue() {
    return process.exitValue();
  }

  /**
   * Waits for the first line of standard output that {@code matches}.
   *
   * @param matches which line to wait for; {@code line -> true} waits for the first line
   * @param timeout how long to wait at most
   * @return the line, or empty if the output ended (the child exited) or the timeout passed first
   *     (tell them apart with {@link #outputEnded()})
   * @throws InterruptedException if interrupted while waiting
   */
  public Optional<String> awaitLine(Predicate<String> matches, Duration timeout)
      throws InterruptedException {
    long deadline = clock.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      int seen = 0;
      while (true) {
        for (; seen < lines.size(); seen++) {
          if (matches.test(lines.get(seen))) {
            return Optional.of(lines.get(seen));
          }
        }
        long left = deadline - clock.nanoTime();
        if (outputEnded || left <= 0) {
          return Optional.empty();
        }
        changed.awaitNanos(left);
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether the child's standard output has ended (it exited or closed it).
   *
   * @return true once the reader saw the end
   */
  public boolean outputEnded() {
    lock.lock();
    try {
      return outputEnded;
    } finally {
      lock.unlock();
    }
  }

  /**
   * The standard output read so far (its first {@value #KEPT_CHARS} characters).
   *
   * @return the text, lines ending with {@code \n}
   */
  public String stdout() {
    lock.lock();
    try {
      return output.toString();
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until the child has exited and its standard output is read to the end.
   *
   * @param timeout how long to wait at most
   * @return true if it exited in time
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitExit(Duration timeout) throws InterruptedException {
    long deadline = clock.nanoTime() + timeout.toNanos();
    if (!process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
      return false;
    }
    long left = Math.max(0, deadline - clock.nanoTime());
    return reader.join(Duration.ofNanos(left)) || outputEnded();
  }

  /**
   * Asks the child to stop (SIGTERM) and kills it if it has not exited after {@code grace}.
   *
   * @param grace how long the child may take to stop
   * @return true if it stopped within the grace period
   */
  public boolean stop(Duration grace) {
    process.destroy();
    try {
      if (process.waitFor(grace.toNanos(), TimeUnit.NANOSECONDS)) {
        return true;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process.destroyForcibly();
    return false;
  }

  /** Asks the child to stop (SIGTERM). Does not wait; see {@link #awaitExit}. */
  public void terminate() {
    process.destroy();
  }

  /** Kills the child (SIGKILL), which also ends a stopped (SIGSTOP) one. Does not wait. */
  public void kill() {
    process.destroyForcibly();
  }

  /** Stops the child: {@link #stop} with {@link #STOP_GRACE}. */
  @Override
  public void close() {
    stop(STOP_GRACE);
  }

  @Override
  public String toString() {
    return "ChildJvm[" + name + ", pid=" + process.pid() + "]";
  }

  private void readOutput() {
    try (BufferedReader in =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        append(line);
      }
    } catch (IOException e) {
      // The pipe broke: the child is gone, which is what outputEnded reports.
    } finally {
      lock.lock();
      try {
        outputEnded = true;
        changed.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  private void append(String line) {
    lock.lock();
    try {
      if (output.length() + line.length() < KEPT_CHARS) {
        output.append(line).append('\n');
        lines.add(line);
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
  }
}
