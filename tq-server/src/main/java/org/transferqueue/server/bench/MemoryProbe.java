package org.transferqueue.server.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Tells how much physical memory the machine has and how much is available now. The harness asks it
 * before generating data; tests substitute a probe that reports a short machine.
 */
public interface MemoryProbe {
  /**
   * Physical memory that can be taken without swapping (Linux {@code MemAvailable}).
   *
   * @return bytes, or -1 when unknown
   */
  long availableBytes();

  /**
   * Total physical memory.
   *
   * @return bytes, or -1 when unknown
   */
  long totalBytes();

  /**
   * A probe with fixed figures.
   *
   * @param availableBytes what {@link #availableBytes()} returns
   * @param totalBytes what {@link #totalBytes()} returns
   * @return the probe
   */
  static MemoryProbe fixed(long availableBytes, long totalBytes) {
    return new MemoryProbe() {
      @Override
      public long availableBytes() {
        return availableBytes;
      }

      @Override
      public long totalBytes() {
        return totalBytes;
      }
    };
  }

  /**
   * The machine's probe: {@code /proc/meminfo} where it exists, else the operating-system bean's
   * free and total physical memory.
   *
   * @return the probe
   */
  static MemoryProbe system() {
    return new MemoryProbe() {
      @Override
      public long availableBytes() {
        long fromProc = meminfo("MemAvailable:");
        return fromProc >= 0 ? fromProc : bean() == null ? -1 : bean().getFreeMemorySize();
      }

      @Override
      public long totalBytes() {
        long fromProc = meminfo("MemTotal:");
        return fromProc >= 0 ? fromProc : bean() == null ? -1 : bean().getTotalMemorySize();
      }
    };
  }

  private static com.sun.management.OperatingSystemMXBean bean() {
    return ManagementFactory.getOperatingSystemMXBean()
            instanceof com.sun.management.OperatingSystemMXBean os
        ? os
        : null;
  }

  private static long meminfo(String key) {
    Path file = Path.of("/proc/meminfo");
    if (!Files.isReadable(file)) {
      return -1;
    }
    try {
      List<String> lines = Files.readAllLines(file);
      for (String line : lines) {
        if (line.startsWith(key)) {
          String[] parts = line.substring(key.length()).trim().split("\\s+");
          return Long.parseLong(parts[0]) * 1024;
        }
      }
      return -1;
    } catch (IOException | NumberFormatException e) {
      return -1; // an unreadable file means unknown, and the caller falls back
    }
  }
}
