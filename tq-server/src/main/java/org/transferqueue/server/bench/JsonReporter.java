package org.transferqueue.server.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.JsonWriter;

/**
 * Writes a report as JSON: the configuration, the environment (JDK, OS, cores, memory), and per
 * size its baseline and every iteration's timings and figures, with per-case means. Stateless.
 *
 * <pre>
 * { "tool": "tq bench", "startedAt": .., "configuration": {..}, "environment": {..},
 *   "units": {..}, "unavailableModes": {..},
 *   "sizes": [ { "name", "batch", "fields", "seqLen", "bytes", "gib",
 *                "baselines": { "embedded": { "kind", "bytes", "seconds": [..], "gbPerSec" } },
 *                "results": [ { "backend", "mode", "verified", "mean": {..}, "steady": {..},
 *                               "iterations": [ {..}, .. ], "warmup": [ {..}, .. ] } ],
 *                "shmVsTcp": [ { "backend", "memoryCopyGbPerSec", "putShmToTcp", .. } ] } ] }
 * </pre>
 */
public final class JsonReporter {
  private JsonReporter() {}

  /**
   * The JSON text.
   *
   * @param report the report
   * @return a JSON object, pretty-printed
   */
  public static String render(BenchReport report) {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("tool", "tq bench");
    root.put("startedAt", report.startedAt().toString());
    root.put("configuration", configuration(report.plan()));
    BenchEnvironment env = report.environment();
    Map<String, Object> environment = new LinkedHashMap<>();
    environment.put("jdk", env.jdk());
    environment.put("jdkVendor", env.jdkVendor());
    environment.put("vm", env.vm());
    environment.put("os", env.os());
    environment.put("arch", env.arch());
    environment.put("cores", env.cores());
    environment.put("physicalMemoryBytes", env.physicalMemoryBytes());
    environment.put("availableMemoryBytes", env.availableMemoryBytes());
    root.put("environment", environment);
    Map<String, Object> units = new LinkedHashMap<>();
    units.put("GBps", "10^9 bytes per second");
    units.put("Gbps", "GiB (2^30 bytes) x 8 per second, upstream's figure");
    units.put("ratio", "GB/s divided by the same size's baseline GB/s");
    units.put(
        "heapBytesPerMib",
        "heap bytes allocated per MiB put or read, in the client process and in the server"
            + " processes (summed over the servers)");
    root.put("units", units);
    root.put("unavailableModes", report.unavailableModes());
    List<Object> sizes = new ArrayList<>();
    for (SizeResult size : report.sizes()) {
      sizes.add(size(size, report.plan().warmup()));
    }
    root.put("sizes", sizes);
    return JsonWriter.PRETTY.write(new StringBuilder(), root).append('\n').toString();
  }

  /**
   * Writes the JSON text to a file, replacing it.
   *
   * @param report the report
   * @param file the target
   * @throws UncheckedIOException when the file cannot be written
   */
  public static void write(BenchReport report, Path file) {
    try {
      Files.writeString(file, render(report), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  private static Map<String, Object> configuration(BenchPlan plan) {
    Map<String, Object> config = new LinkedHashMap<>();
    config.put("command", plan.command());
    config.put("sizes", plan.sizes().stream().map(BenchSize::name).toList());
    config.put("complex", plan.complex());
    config.put("backends", plan.backends().stream().map(BenchBackend::configName).toList());
    config.put("modes", plan.modes().stream().map(BenchMode::optionName).toList());
    config.put("iterations", plan.iterations());
    config.put("warmup", plan.warmup().min());
    config.put("warmupMax", plan.warmup().maxIterations());
    config.put("warmupPolicy", plan.warmup().describe());
    config.put("seed", plan.seed());
    config.put("configFile", plan.configSource());
    config.put("partition", BenchRunner.PARTITION);
    config.put("baselineRepetitions", Baseline.REPETITIONS);
    return config;
  }

  private static Map<String, Object> size(SizeResult size, WarmupPolicy warmupPolicy) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("name", size.size().name());
    out.put("batch", size.size().batch());
    out.put("fields", size.size().fields());
    out.put("seqLen", size.size().seqLen());
    out.put("complex", size.complex());
    out.put("bytes", size.bytes());
    out.put("gib", size.bytes() / (double) (1L << 30));
    Map<String, Object> baselines = new LinkedHashMap<>();
    size.baselines()
        .forEach(
            (mode, b) -> {
              Map<String, Object> baseline = new LinkedHashMap<>();
              baseline.put("kind", b.kind());
              baseline.put("bytes", b.bytes());
              baseline.put("seconds", b.seconds());
              if (!b.cpuSeconds().isEmpty()) {
                baseline.put("cpuSeconds", b.cpuSeconds());
                baseline.put("medianCpuSeconds", b.medianCpuSeconds());
              }
              baseline.put("medianSeconds", b.medianSeconds());
              baseline.put("gbPerSec", b.gbPerSec());
              baselines.put(mode.optionName(), baseline);
            });
    out.put("baselines", baselines);
    List<Object> results = new ArrayList<>();
    for (CaseResult c : size.cases()) {
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("backend", c.backend().configName());
      result.put("mode", c.mode().optionName());
      result.put("verified", c.verified());
      Map<String, Object> baseline = new LinkedHashMap<>();
      baseline.put("seconds", c.baseline().seconds());
      baseline.put("medianSeconds", c.baseline().medianSeconds());
      baseline.put("gbPerSec", c.baseline().gbPerSec());
      if (!c.baseline().cpuSeconds().isEmpty()) {
        baseline.put("medianCpuSeconds", c.baseline().medianCpuSeconds());
      }
      result.put("baseline", baseline);
      Map<String, Object> mean = new LinkedHashMap<>();
      mean.put("putSeconds", c.mean(IterationResult::putSeconds));
      mean.put("listSeconds", c.mean(IterationResult::listSeconds));
      mean.put("getSeconds", c.mean(IterationResult::getSeconds));
      mean.put("clearSeconds", c.mean(IterationResult::clearSeconds));
      mean.put("putGbPerSec", c.mean(IterationResult::putGbPerSec));
      mean.put("getGbPerSec", c.mean(IterationResult::getGbPerSec));
      mean.put("totalGbPerSec", c.mean(IterationResult::totalGbPerSec));
      mean.put("putGbps", c.mean(IterationResult::putGbps));
      mean.put("getGbps", c.mean(IterationResult::getGbps));
      mean.put("totalGbps", c.mean(IterationResult::totalGbps));
      mean.put("putRatio", c.mean(IterationResult::putRatio));
      mean.put("getRatio", c.mean(IterationResult::getRatio));
      mean.put("totalRatio", c.mean(IterationResult::totalRatio));
      result.put("mean", mean);
      if (!Double.isNaN(c.mean(IterationResult::putCpuSeconds))) {
        Map<String, Object> cpu = new LinkedHashMap<>();
        cpu.put("putSeconds", c.mean(IterationResult::putCpuSeconds));
        cpu.put("getSeconds", c.mean(IterationResult::getCpuSeconds));
        result.put("cpu", cpu);
      }
      if (c.iterations().size() > 1) {
        Map<String, Object> steady = new LinkedHashMap<>();
        steady.put("fromIteration", 2);
        steady.put("putGbPerSec", c.steadyMean(IterationResult::putGbPerSec).orElseThrow());
        steady.put("getGbPerSec", c.steadyMean(IterationResult::getGbPerSec).orElseThrow());
        steady.put("totalGbPerSec", c.steadyMean(IterationResult::totalGbPerSec).orElseThrow());
        steady.put("totalGbps", c.steadyMean(IterationResult::totalGbps).orElseThrow());
        steady.put("totalRatio", c.steadyMean(IterationResult::totalRatio).orElseThrow());
        result.put("steady", steady);
      }
      if (!c.heap().isEmpty()) {
        Map<String, Object> heap = new LinkedHashMap<>();
        heap.put("fromIteration", c.heap().size() > 1 ? 2 : 1);
        heap.put("goalBytesPerMib", HeapAllocation.GOAL_BYTES_PER_MIB);
        heap.put("clientPut", c.heapSteadyMean(HeapAllocation::clientPutPerMib).orElseThrow());
        heap.put("serverPut", c.heapSteadyMean(HeapAllocation::serverPutPerMib).orElseThrow());
        heap.put("clientGet", c.heapSteadyMean(HeapAllocation::clientGetPerMib).orElseThrow());
        heap.put("serverGet", c.heapSteadyMean(HeapAllocation::serverGetPerMib).orElseThrow());
        heap.put(
            "controllerPut", c.heapSteadyMean(HeapAllocation::controllerPutPerMib).orElseThrow());
        heap.put(
            "controllerGet", c.heapSteadyMean(HeapAllocation::controllerGetPerMib).orElseThrow());
        heap.put(
            "storageServerPut",
            c.heapSteadyMean(HeapAllocation::storageServerPutPerMib).orElseThrow());
        heap.put(
            "storageServerGet",
            c.heapSteadyMean(HeapAllocation::storageServerGetPerMib).orElseThrow());
        result.put("heapBytesPerMib", heap);
      }
      List<Object> iterations = new ArrayList<>();
      for (IterationResult r : c.iterations()) {
        Map<String, Object> iteration = iteration(r);
        c.heap().stream()
            .filter(h -> h.iteration() == r.iteration())
            .findFirst()
            .ifPresent(h -> iteration.putAll(heap(h)));
        iterations.add(iteration);
      }
      result.put("iterations", iterations);
      List<Object> warmup = new ArrayList<>();
      for (IterationResult r : c.warmup()) {
        warmup.add(iteration(r));
      }
      result.put("warmup", warmup);
      result.put("warmupIterations", c.warmup().size());
      result.put("warmupSettled", warmupPolicy.settled(c.warmup()));
      results.add(result);
    }
    out.put("results", results);
    List<Object> transports = new ArrayList<>();
    for (TransportComparison c : TransportComparison.of(size)) {
      transports.add(transport(c));
    }
    out.put("shmVsTcp", transports);
    return out;
  }

  private static Map<String, Object> transport(TransportComparison c) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("backend", c.backend().configName());
    out.put("memoryCopyGbPerSec", c.memoryCopyGbPerSec());
    if (!c.shm().baseline().cpuSeconds().isEmpty()) {
      out.put("memoryCopyCpuSeconds", c.shm().baseline().medianCpuSeconds());
    }
    out.put("shmPutGbPerSec", c.shm().mean(IterationResult::putGbPerSec));
    out.put("shmGetGbPerSec", c.shm().mean(IterationResult::getGbPerSec));
    out.put("tcpPutGbPerSec", c.tcp().mean(IterationResult::putGbPerSec));
    out.put("tcpGetGbPerSec", c.tcp().mean(IterationResult::getGbPerSec));
    out.put("shmPutToMemoryCopy", c.shmPutToMemoryCopy());
    out.put("shmGetToMemoryCopy", c.shmGetToMemoryCopy());
    out.put("tcpPutToMemoryCopy", c.tcpPutToMemoryCopy());
    out.put("tcpGetToMemoryCopy", c.tcpGetToMemoryCopy());
    out.put("putShmToTcp", c.putShmToTcp());
    out.put("getShmToTcp", c.getShmToTcp());
    out.put("shmPutCpuSeconds", c.shm().mean(IterationResult::putCpuSeconds));
    out.put("shmGetCpuSeconds", c.shm().mean(IterationResult::getCpuSeconds));
    out.put("tcpPutCpuSeconds", c.tcp().mean(IterationResult::putCpuSeconds));
    out.put("tcpGetCpuSeconds", c.tcp().mean(IterationResult::getCpuSeconds));
    out.put("putCpuShmToTcp", c.putCpuShmToTcp());
    out.put("getCpuShmToTcp", c.getCpuShmToTcp());
    return out;
  }

  private static Map<String, Object> iteration(IterationResult r) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("iteration", r.iteration());
    out.put("bytes", r.bytes());
    out.put("putSeconds", r.putSeconds());
    out.put("listSeconds", r.listSeconds());
    out.put("getSeconds", r.getSeconds());
    out.put("clearSeconds", r.clearSeconds());
    out.put("putGbPerSec", r.putGbPerSec());
    out.put("getGbPerSec", r.getGbPerSec());
    out.put("totalGbPerSec", r.totalGbPerSec());
    out.put("putGbps", r.putGbps());
    out.put("getGbps", r.getGbps());
    out.put("totalGbps", r.totalGbps());
    out.put("baselineGbPerSec", r.baselineGbPerSec());
    out.put("putRatio", r.putRatio());
    out.put("getRatio", r.getRatio());
    out.put("totalRatio", r.totalRatio());
    if (!Double.isNaN(r.putCpuSeconds())) {
      out.put("putCpuSeconds", r.putCpuSeconds());
    }
    if (!Double.isNaN(r.getCpuSeconds())) {
      out.put("getCpuSeconds", r.getCpuSeconds());
    }
    if (!Double.isNaN(r.cpuSeconds())) {
      out.put("cpuSeconds", r.cpuSeconds());
    }
    if (!Double.isNaN(r.compilerCpuSeconds())) {
      out.put("compilerCpuSeconds", r.compilerCpuSeconds());
    }
    return out;
  }

  private static Map<String, Object> heap(HeapAllocation h) {
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("clientPutHeapBytes", h.clientPutBytes());
    out.put("serverPutHeapBytes", h.serverPutBytes());
    out.put("clientGetHeapBytes", h.clientGetBytes());
    out.put("serverGetHeapBytes", h.serverGetBytes());
    out.put("clientPutHeapBytesPerMib", h.clientPutPerMib());
    out.put("serverPutHeapBytesPerMib", h.serverPutPerMib());
    out.put("clientGetHeapBytesPerMib", h.clientGetPerMib());
    out.put("serverGetHeapBytesPerMib", h.serverGetPerMib());
    out.put("controllerPutHeapBytes", h.controllerPutBytes());
    out.put("controllerGetHeapBytes", h.controllerGetBytes());
    out.put("storageServers", h.storageServers());
    return out;
  }
}
