package org.transferqueue.server.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * CPU time consumed by this process and by the child processes of a case (the loopback servers or
 * the baseline's receiver), all threads, user and system, so that a figure can say how much CPU a
 * put or a get cost next to the wall time: on a machine with few cores, shared with other work, the
 * wall time of a pipeline of several processes is bounded below by their CPU time over the cores
 * they get.
 *
 * <p>On Linux every process is read as the sum of the nanosecond run times of its live threads
 * ({@code /proc/<pid>/task/<tid>/schedstat}); the process-wide counters there and in {@code
 * com.sun.management.OperatingSystemMXBean} only have clock-tick resolution (10 ms), too coarse for
 * a put of a few tens of milliseconds. A thread that exits between two readings takes its time with
 * it, so differences are clamped at zero by the caller. Elsewhere this process is read through
 * {@code com.sun.management.OperatingSystemMXBean} and children through {@link
 * ProcessHandle.Info#totalCpuDuration()}. Not thread-safe; owned by the bench's thread.
 */
final class CpuMeter {
  /** What HotSpot's compiler thread names have after {@code C1}/{@code C2}. */
  private static final String COMPILER_THREAD_PREFIX = " CompilerThre";

  private final List<Long> children = new ArrayList<>();

  /**
   * Also counts the child process {@code pid}.
   *
   * @param pid the child
   * @return this meter
   */
  CpuMeter add(long pid) {
    children.add(pid);
    return this;
  }

  /**
   * CPU time the JIT compiler threads of this process and of the added children used so far; only
   * differences are meaningful. While it still grows by more than a few percent of a case's CPU per
   * iteration, the case's processes are still compiling its code paths: the iteration is not yet
   * the steady state a long-running job sees ({@link WarmupPolicy}).
   *
   * @return nanoseconds, or -1 when this platform does not report compiler threads (no {@code
   *     /proc})
   */
  long compilerNanos() {
    long total = threadNanos(ProcessHandle.current().pid(), true);
    if (total < 0) {
      return -1;
    }
    for (long pid : children) {
      total += Math.max(0, threadNanos(pid, true));
    }
    return total;
  }

  /**
   * CPU time of this process and the added children so far; only differences are meaningful.
   *
   * @return nanoseconds, or -1 when this platform does not report it
   */
  long cpuNanos() {
    long own = threadNanos(ProcessHandle.current().pid());
    if (own < 0) {
      if (!(ManagementFactory.getOperatingSystemMXBean()
          instanceof com.sun.management.OperatingSystemMXBean os)) {
        return -1;
      }
      own = os.getProcessCpuTime();
      if (own < 0) {
        return -1;
      }
    }
    long total = own;
    for (long pid : children) {
      total += childNanos(pid);
    }
    return total;
  }

  private static long childNanos(long pid) {
    long threads = threadNanos(pid);
    if (threads >= 0) {
      return threads;
    }
    Optional<Duration> cpu =
        ProcessHandle.of(pid).flatMap(handle -> handle.info().totalCpuDuration());
    return cpu.map(Duration::toNanos).orElse(0L);
  }

  /** The summed run time of the live threads of {@code pid}, or -1 without {@code /proc}. */
  private static long threadNanos(long pid) {
    return threadNanos(pid, false);
  }

  /**
   * The summed run time of the live threads of {@code pid}, or only of its JIT compiler threads, or
   * -1 without {@code /proc}.
   */
  private static long threadNanos(long pid, boolean compilersOnly) {
    Path tasks = Path.of("/proc", Long.toString(pid), "task");
    if (Files.isDirectory(tasks)) {
      long sum = 0;
      try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
        for (Path thread : threads) {
          if (!compilersOnly || isCompilerThread(thread)) {
            sum += schedstatNanos(thread.resolve("schedstat"));
          }
        }
        return sum;
      } catch (IOException e) {
        // The process exited while we listed it: what it used is no longer reported.
        return sum;
      }
    }
    return -1;
  }

  /**
   * Whether a thread of {@code /proc/<pid>/task} is one of HotSpot's JIT compiler threads ({@code
   * C1 CompilerThread<n>}, {@code C2 CompilerThread<n>}; the kernel keeps the first 15 characters).
   */
  private static boolean isCompilerThread(Path thread) {
    try {
      String name = Files.readString(thread.resolve("comm"));
      return name.startsWith(COMPILER_THREAD_PREFIX, 2)
          && (name.charAt(0) == 'C')
          && (name.charAt(1) == '1' || name.charAt(1) == '2');
    } catch (IOException | StringIndexOutOfBoundsException e) {
      // A thread that ended between the listing and the read compiles nothing more.
      return false;
    }
  }

  private static long schedstatNanos(Path schedstat) {
    try {
      String line = Files.readString(schedstat).trim();
      int space = line.indexOf(' ');
      return Long.parseLong(space < 0 ? line : line.substring(0, space));
    } catch (IOException | NumberFormatException e) {
      // A thread that ended between the listing and the read used nothing we can still see.
      return 0;
    }
  }
}
