package org.transferqueue.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads this process's resident set size. Stateless and thread-safe. */
public final class ProcessMemory {
  private static final Path STATUS = Path.of("/proc/self/status");

  private ProcessMemory() {}

  /**
   * The resident set size, from the {@code VmRSS} line of {@code /proc/self/status} (Linux).
   *
   * @return bytes, 0 where the file or the line is unavailable
   */
  public static long rssBytes() {
    try {
      return parseVmRss(Files.readString(STATUS));
    } catch (IOException | RuntimeException e) {
      return 0;
    }
  }

  /**
   * Extracts the {@code VmRSS} value of a {@code /proc/<pid>/status} text.
   *
   * @param status the file's text
   * @return bytes, 0 when the line is missing or malformed
   */
  static long parseVmRss(String status) {
    for (String line : status.split("\n")) {
      if (line.startsWith("VmRSS:")) {
        String[] parts = line.substring("VmRSS:".length()).trim().split("\\s+");
        try {
          long value = Long.parseLong(parts[0]);
          return parts.length > 1 && parts[1].equalsIgnoreCase("kB") ? value * 1024 : value;
        } catch (NumberFormatException e) {
          return 0;
        }
      }
    }
    return 0;
  }
}
