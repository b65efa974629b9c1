package org.transferqueue.server.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads the peak resident memory ({@code VmHWM}) of any process from {@code /proc/<pid>/status}
 * (Linux); {@code metrics.ProcessMemory} reads the current {@code VmRSS} of this one. Stateless.
 */
public final class PeakRss {
  private PeakRss() {}

  /**
   * The peak resident set size ({@code VmHWM}) of a process.
   *
   * @param pid the process id
   * @return bytes, or -1 when the file is absent or unreadable (not Linux, process gone)
   */
  public static long peakRssBytes(long pid) {
    return statusKilobytes(Path.of("/proc", Long.toString(pid), "status"), "VmHWM:");
  }

  /**
   * The peak resident set size of this JVM.
   *
   * @return bytes, or -1 when unknown
   */
  public static long ownPeakRssBytes() {
    return peakRssBytes(ProcessHandle.current().pid());
  }

  static long statusKilobytes(Path status, String key) {
    try {
      for (String line : Files.readAllLines(status)) {
        if (line.startsWith(key)) {
          String[] parts = line.substring(key.length()).trim().split("\\s+");
          return Long.parseLong(parts[0]) * 1024;
        }
      }
      return -1;
    } catch (IOException | NumberFormatException e) {
      return -1; // unknown: the report says so instead of failing the run
    }
  }
}
