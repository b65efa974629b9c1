package org.transferqueue.server.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/** Where the storage runs relative to the benchmark's client, and how the bytes travel. */
public enum BenchMode {
  /** Controller, storage and client in this JVM; data moves by memory copy. */
  EMBEDDED("embedded", null),
  /**
   * Controller and storage servers as child processes on this machine, reached over loopback
   * sockets through a {@code TqClient}, with shared memory off on both sides: every body byte
   * crosses the socket.
   */
  LOOPBACK("loopback", null),
  /**
   * The servers of {@link #LOOPBACK}, with shared memory on in the servers and the client ({@code
   * network.shared_memory: true}): the socket carries the control frames, the bodies travel through
   * the servers' shared-memory segments. Compared with a memory copy of the same bytes in one
   * process and, when {@link #LOOPBACK} runs in the same plan, with it.
   */
  SHM("shm", System.getProperty("os.name", "").startsWith("Linux") ? null : notOnLinux());

  private final String optionName;
  private final String missing;

  BenchMode(String optionName, String missing) {
    this.optionName = optionName;
    this.missing = missing;
  }

  private static String notOnLinux() {
    return "shm mode needs Linux (memfd segments mapped through /proc/<pid>/fd)";
  }

  /**
   * The command-line name.
   *
   * @return {@code embedded}, {@code loopback} or {@code shm}
   */
  public String optionName() {
    return optionName;
  }

  /**
   * Whether the mode's servers run as child processes reached over loopback sockets.
   *
   * @return true for {@link #LOOPBACK} and {@link #SHM}
   */
  public boolean servedByChildProcesses() {
    return this != EMBEDDED;
  }

  /**
   * What this build lacks to run the mode.
   *
   * @return a message naming the missing parts, or empty when the mode can run
   */
  public Optional<String> missing() {
    return Optional.ofNullable(missing);
  }

  /**
   * The modes named by a command-line value.
   *
   * @param value {@code embedded}, {@code loopback}, {@code shm}, a comma-separated list of them
   *     (e.g. {@code loopback,shm}), or {@code all}, in any case
   * @return the named modes that can run, in the order given, without repeats; for {@code all},
   *     every mode that can run
   * @throws TqException {@code INVALID_ARGUMENT} for an unknown or empty value, and {@code
   *     UNSUPPORTED_OPERATION} with {@link #missing()} for a named mode that cannot run in this
   *     build
   */
  public static List<BenchMode> parse(String value) {
    String wanted = value.trim().toLowerCase(Locale.ROOT);
    if (wanted.equals("all")) {
      List<BenchMode> runnable = new ArrayList<>();
      for (BenchMode mode : values()) {
        if (mode.missing == null) {
          runnable.add(mode);
        }
      }
      return List.copyOf(runnable);
    }
    List<BenchMode> modes = new ArrayList<>();
    for (String name : wanted.split(",", -1)) {
      BenchMode mode = named(name.trim(), value);
      if (mode.missing != null) {
        throw new TqException(ErrorCode.UNSUPPORTED_OPERATION, mode.missing);
      }
      if (!modes.contains(mode)) {
        modes.add(mode);
      }
    }
    return List.copyOf(modes);
  }

  private static BenchMode named(String name, String value) {
    for (BenchMode mode : values()) {
      if (mode.optionName.equals(name)) {
        return mode;
      }
    }
    throw new TqException(
        ErrorCode.INVALID_ARGUMENT,
        "unknown mode '"
            + name
            + "' in '"
            + value
            + "' (choose embedded, loopback, shm, a comma-separated list of them, or all)");
  }

  /**
   * The modes a command-line value asked for that this build cannot run: for {@code all}, every
   * mode with something {@link #missing()}; for named modes, none (an unavailable named mode is
   * rejected by {@link #parse}).
   *
   * @param value the command-line value
   * @return the modes left out
   */
  public static List<BenchMode> skipped(String value) {
    if (!value.trim().equalsIgnoreCase("all")) {
      return List.of();
    }
    List<BenchMode> skipped = new ArrayList<>();
    for (BenchMode mode : values()) {
      if (mode.missing != null) {
        skipped.add(mode);
      }
    }
    return List.copyOf(skipped);
  }
}
