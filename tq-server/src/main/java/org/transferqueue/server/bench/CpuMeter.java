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
   * CPU time of all threads and of the JIT compiler threads of this process and the added children,
   * read in one pass over their threads; only differences are meaningful.
   *
   * @param cpuNanos all threads, as {@link #cpuNanos()}; -1 when the platform does not report it
   * @param compilerNanos the compiler threads alone: while they still use more than a few percent
   *     of a case's CPU per iteration, the case's processes are compiling its code paths and the
   *     iteration is not yet the steady state a long-running job sees ({@link WarmupPolicy}); -1
   *     when the platform does not show them (no {@code /proc})
   */
  record Reading(long cpuNanos, long compilerNanos) {}

  /**
   * Reads all threads and the compiler threads together.
   *
   * @return the reading
   */
  Reading read() {
    long[] own = threadNanos(ProcessHandle.current().pid(), true);
    if (own == null) {
      return new Reading(cpuNanos(), -1);
    }
    long all = own[0];
    long compilers = own[1];
    for (long pid : children) {
      long[] child = threadNanos(pid, true);
      if (child == null) {
        all += childNanos(pid);
      } else {
        all += child[0];
        compilers += child[1];
      }
    }
    return new Reading(all, compilers);
  }

  /**
   * CPU time of this process and the added children so far; only differences are meaningful.
   *
   * @return nanoseconds, or -1 when this platform does not report it
   */
  long cpuNanos() {
    long[] threads = threadNanos(ProcessHandle.current().pid(), false);
    long own = threads == null ? -1 : threads[0];
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
    long[] threads = threadNanos(pid, false);
    if (threads != null) {
      return threads[0];
    }
    Optional<Duration> cpu =
        ProcessHandle.of(pid).flatMap(handle -> handle.info().totalCpuDuration());
    return cpu.map(Duration::toNanos).orElse(0L);
  }

  /**
   * The summed run time of the live threads of {@code pid} and, when {@code splitCompilers}, of its
   * JIT compiler threads alone (else 0); null without {@code /proc}.
   */
  private static long[] threadNanos(long pid, boolean splitCompilers) {
    Path tasks = Path.of("/proc", Long.toString(pid), "task");
    if (!Files.isDirectory(tasks)) {
      return null;
    }
    long[] sums = new long[2];
    try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
      for (Path thread : threads) {
        long nanos = schedstatNanos(thread.resolve("schedstat"));
        sums[0] += nanos;
        if (splitCompilers && isCompilerThread(thread)) {
          sums[1] += nanos;
        }
      }
    } catch (IOException e) {
      // The process exited while we listed it: what it used is no longer reported.
    }
    return sums;
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
