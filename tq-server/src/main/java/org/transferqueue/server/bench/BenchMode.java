package org.transferqueue.server.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/** Where the storage runs relative to the benchmark's client. */
public enum BenchMode {
  /** Controller, storage and client in this JVM; data moves by memory copy. */
  EMBEDDED("embedded", null),
  /**
   * Controller and storage servers as child processes on this machine, reached over loopback
   * sockets through a {@code TqClient}.
   */
  LOOPBACK("loopback", null);

  private final String optionName;
  private final String missing;

  BenchMode(String optionName, String missing) {
    this.optionName = optionName;
    this.missing = missing;
  }

  /**
   * The command-line name.
   *
   * @return {@code embedded} or {@code loopback}
   */
  public String optionName() {
    return optionName;
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
   * @param value {@code embedded}, {@code loopback} or {@code all}, in any case
   * @return for a single mode, that mode if it can run; for {@code all}, every mode that can run
   * @throws TqException {@code INVALID_ARGUMENT} for an unknown value, and {@code
   *     UNSUPPORTED_OPERATION} with {@link #missing()} for a single mode that cannot run in this
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
    for (BenchMode mode : values()) {
      if (mode.optionName.equals(wanted)) {
        if (mode.missing != null) {
          throw new TqException(ErrorCode.UNSUPPORTED_OPERATION, mode.missing);
        }
        return List.of(mode);
      }
    }
    throw new TqException(
        ErrorCode.INVALID_ARGUMENT,
        "unknown mode '" + value + "' (choose one of embedded, loopback or all)");
  }

  /**
   * The modes a command-line value asked for that this build cannot run: for {@code all}, every
   * mode with something {@link #missing()}; for a single mode, none (an unavailable single mode is
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
