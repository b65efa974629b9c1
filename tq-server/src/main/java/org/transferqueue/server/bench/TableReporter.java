package org.transferqueue.server.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/** Renders a report as the text table {@code tq bench} prints. Stateless. */
public final class TableReporter {
  private TableReporter() {}

  /**
   * The table: per size its baseline, then one row per backend and mode with mean put, get and
   * round-trip figures over the iterations.
   *
   * @param report the report
   * @return lines separated by {@code \n}, ending with one
   */
  public static String render(BenchReport report) {
    StringBuilder out = new StringBuilder();
    BenchEnvironment env = report.environment();
    out.append(
        String.format(
            Locale.ROOT,
            "JDK %s (%s), %s %s, %d cores, %s physical memory%n",
            env.jdk(),
            env.jdkVendor(),
            env.os(),
            env.arch(),
            env.cores(),
            env.physicalMemoryBytes() < 0
                ? "unknown"
                : MemoryCheck.gib(env.physicalMemoryBytes())));
    out.append(
        String.format(
            Locale.ROOT,
            "%d iterations per case after %s (not in the means), %s data; means over all"
                + " measured iterations; GB/s = 10^9 bytes/s,"
                + " Gbps = GiB x 8 / s (upstream's figure), x = ratio to the baseline measured before the case,"
                + " rt = round trip (put + get), 2+ = iterations after the first%n",
            report.plan().iterations(),
            report.plan().warmup().describe(),
            report.plan().complex() ? "complex" : "simple"));
    for (SizeResult size : report.sizes()) {
      out.append(
          String.format(
              Locale.ROOT,
              "%n%s: %s per batch%n",
              size.size().label(),
              MemoryCheck.gib(size.bytes())));
      size.baselines()
          .forEach(
              (mode, baseline) ->
                  out.append(
                      String.format(
                          Locale.ROOT,
                          "  %s baseline: %s, %.2f GB/s%s%n",
                          mode.optionName(),
                          baseline.kind(),
                          baseline.gbPerSec(),
                          perCase(size, mode))));
      out.append(
          String.format(
              Locale.ROOT,
              "  %-24s %9s %7s %9s %7s %9s %7s %9s %10s %8s %8s%n",
              "backend/mode",
              "put GB/s",
              "x",
              "get GB/s",
              "x",
              "rt GB/s",
              "x",
              "rt Gbps",
              "rt 2+ GB/s",
              "list s",
              "clear s"));
      for (CaseResult c : size.cases()) {
        out.append(
            String.format(
                Locale.ROOT,
                "  %-24s %9.3f %7.3f %9.3f %7.3f %9.3f %7.3f %9.3f %10s %8.4f %8.4f%n",
                c.label(),
                c.mean(IterationResult::putGbPerSec),
                c.mean(IterationResult::putRatio),
                c.mean(IterationResult::getGbPerSec),
                c.mean(IterationResult::getRatio),
                c.mean(IterationResult::totalGbPerSec),
                c.mean(IterationResult::totalRatio),
                c.mean(IterationResult::totalGbps),
                steady(c),
                c.mean(IterationResult::listSeconds),
                c.mean(IterationResult::clearSeconds)));
        if (!c.heap().isEmpty()) {
          out.append(
              String.format(
                  Locale.ROOT,
                  "  %-24s heap B/MiB moved (2+, goal < %.0f): put client %.1f server %.1f,"
                      + " get client %.1f server %.1f%n"
                      + "  %-24s   server = controller + storage servers: put %.1f + %.1f each,"
                      + " get %.1f + %.1f each%n",
                  "",
                  HeapAllocation.GOAL_BYTES_PER_MIB,
                  c.heapSteadyMean(HeapAllocation::clientPutPerMib).orElseThrow(),
                  c.heapSteadyMean(HeapAllocation::serverPutPerMib).orElseThrow(),
                  c.heapSteadyMean(HeapAllocation::clientGetPerMib).orElseThrow(),
                  c.heapSteadyMean(HeapAllocation::serverGetPerMib).orElseThrow(),
                  "",
                  c.heapSteadyMean(HeapAllocation::controllerPutPerMib).orElseThrow(),
                  c.heapSteadyMean(HeapAllocation::storageServerPutPerMib).orElseThrow(),
                  c.heapSteadyMean(HeapAllocation::controllerGetPerMib).orElseThrow(),
                  c.heapSteadyMean(HeapAllocation::storageServerGetPerMib).orElseThrow()));
        }
      }
      cpu(out, size);
      transports(out, size);
    }
    report
        .unavailableModes()
        .forEach(
            (mode, missing) ->
                out.append(String.format(Locale.ROOT, "%nnot run: %s (%s)%n", mode, missing)));
    return out.toString();
  }

  /**
   * CPU time per put and get, summed over the case's processes, next to the baseline's: with
   * several processes sharing few cores, the wall time cannot drop below CPU time / cores.
   */
  private static void cpu(StringBuilder out, SizeResult size) {
    boolean header = false;
    for (CaseResult c : size.cases()) {
      Baseline baseline = c.baseline();
      double put = c.mean(IterationResult::putCpuSeconds);
      if (Double.isNaN(put) || baseline == null || baseline.cpuSeconds().isEmpty()) {
        continue;
      }
      if (!header) {
        out.append(
            String.format(
                Locale.ROOT,
                "  CPU s per batch, all processes of the case (x = over the baseline's CPU s)%n"));
        header = true;
      }
      double get = c.mean(IterationResult::getCpuSeconds);
      double base = baseline.medianCpuSeconds();
      out.append(
          String.format(
              Locale.ROOT,
              "  %-24s put %7.3f x %5.2f  get %7.3f x %5.2f  (baseline %.3f)%s%n",
              c.label(),
              put,
              put / base,
              get,
              get / base,
              base,
              compilation(c)));
    }
  }

  /**
   * Each backend's shared-memory case next to its TCP case and the memory copy measured before the
   * shm case: throughput, ratios and CPU seconds of a put and a get.
   */
  private static void transports(StringBuilder out, SizeResult size) {
    for (TransportComparison c : TransportComparison.of(size)) {
      out.append(
          String.format(
              Locale.ROOT,
              "  %s shm vs tcp (memory copy of the same bytes %.2f GB/s, CPU %.3f s):%n",
              c.backend().configName(),
              c.memoryCopyGbPerSec(),
              c.shm().baseline().medianCpuSeconds()));
      line(
          out,
          "put",
          c.shm(),
          c.tcp(),
          IterationResult::putGbPerSec,
          IterationResult::putCpuSeconds,
          c.shmPutToMemoryCopy(),
          c.tcpPutToMemoryCopy(),
          c.putShmToTcp(),
          c.putCpuShmToTcp());
      line(
          out,
          "get",
          c.shm(),
          c.tcp(),
          IterationResult::getGbPerSec,
          IterationResult::getCpuSeconds,
          c.shmGetToMemoryCopy(),
          c.tcpGetToMemoryCopy(),
          c.getShmToTcp(),
          c.getCpuShmToTcp());
    }
  }

  private static void line(
      StringBuilder out,
      String what,
      CaseResult shm,
      CaseResult tcp,
      ToDoubleFunction<IterationResult> gbPerSec,
      ToDoubleFunction<IterationResult> cpuSeconds,
      double shmToCopy,
      double tcpToCopy,
      double shmToTcp,
      double cpuShmToTcp) {
    out.append(
        String.format(
            Locale.ROOT,
            "    %s  shm %.3f GB/s = %.3f x copy, CPU %.3f s | tcp %.3f GB/s = %.3f x copy,"
                + " CPU %.3f s | shm/tcp %.2f x, CPU %.2f x%n",
            what,
            shm.mean(gbPerSec),
            shmToCopy,
            shm.mean(cpuSeconds),
            tcp.mean(gbPerSec),
            tcpToCopy,
            tcp.mean(cpuSeconds),
            shmToTcp,
            cpuShmToTcp));
  }

  /**
   * The warm-up iterations a case ran and the share of its measured iterations' CPU that went to
   * the JIT compilers, or nothing when not measured.
   */
  private static String compilation(CaseResult c) {
    double compiler = c.mean(IterationResult::compilerCpuSeconds);
    double all = c.mean(IterationResult::cpuSeconds);
    if (Double.isNaN(compiler) || Double.isNaN(all) || all <= 0) {
      return "";
    }
    return String.format(
        Locale.ROOT,
        "  warm-up %d, compiling %.1f%% of the measured CPU",
        c.warmup().size(),
        100 * compiler / all);
  }

  /** The baselines measured before each case of a mode, when there are several. */
  private static String perCase(SizeResult size, BenchMode mode) {
    List<String> each = new ArrayList<>();
    for (CaseResult c : size.cases()) {
      if (c.mode() == mode) {
        each.add(
            String.format(
                Locale.ROOT, "%s %.2f", c.backend().configName(), c.baseline().gbPerSec()));
      }
    }
    return each.size() < 2
        ? ""
        : "; measured again before every case, each x is to its own: " + String.join(", ", each);
  }

  private static String steady(CaseResult c) {
    var steady = c.steadyMean(IterationResult::totalGbPerSec);
    return steady.isPresent() ? String.format(Locale.ROOT, "%.3f", steady.getAsDouble()) : "-";
  }
}
