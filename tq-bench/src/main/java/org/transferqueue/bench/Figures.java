package org.transferqueue.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Runs the benchmarks behind the figures the project reports and prints each figure as a ratio to
 * the baseline measured in the same run, so results compare across machines.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -cp tq-bench/target/tq-benchmarks.jar \
 *     org.transferqueue.bench.Figures [warmupIterations measurementIterations [classRegex [gc]]]
 * </pre>
 *
 * With {@code gc}, JMH's GC profiler runs too and each benchmark's heap allocation per operation
 * ({@code gc.alloc.rate.norm}) is printed.
 *
 * <p>A ratio above 1 means faster than the baseline. Throughput scores are compared directly;
 * average-time scores are inverted first.
 */
public final class Figures {
  /** One figure: a benchmark method compared with a baseline method of the same class. */
  private record Comparison(
      String benchmarkClass, String method, String baseline, String meaning) {}

  private static final List<Comparison> COMPARISONS =
      List.of(
          new Comparison(
              "CopyIntoPoolBenchmark", "pooled", "fresh", "copy into pooled vs fresh segments"),
          new Comparison(
              "PackedCodecBenchmark", "smallPackUnpack", "smallCopyBaseline", "10k small values"),
          new Comparison(
              "PackedCodecBenchmark",
              "tensorsPackUnpackViews",
              "tensorsCopyBaseline",
              "256 x 1 MiB tensors, views"),
          new Comparison(
              "PackedCodecBenchmark",
              "tensorsPackUnpackCopies",
              "tensorsCopyBaseline",
              "256 x 1 MiB tensors, copies"),
          new Comparison("SimpleStorageBenchmark", "put", "copyBaseline", "SimpleStorage put"),
          new Comparison("SimpleStorageBenchmark", "get", "copyBaseline", "SimpleStorage get"),
          new Comparison(
              "ObjectStoreBenchmark",
              "batchUpsertFrom",
              "memorySegmentCopy",
              "store batchUpsertFrom"),
          new Comparison(
              "ObjectStoreBenchmark", "batchGetInto", "memorySegmentCopy", "store batchGetInto"),
          new Comparison(
              "MooncakeKvClientBenchmark", "put", "copyBaseline", "MooncakeKvClient put"),
          new Comparison(
              "MooncakeKvClientBenchmark", "get", "copyBaseline", "MooncakeKvClient get"),
          new Comparison(
              "MooncakeKvClientBenchmark",
              "getIntoColumn",
              "copyBaseline",
              "MooncakeKvClient getInto result column"),
          new Comparison(
              "MooncakeKvClientBenchmark",
              "get",
              "getPerCallRegistration",
              "pooled vs per-call registration (get)"),
          new Comparison(
              "MooncakeKvClientBenchmark",
              "put",
              "putPerCallRegistration",
              "pooled vs per-call registration (put)"),
          new Comparison(
              "TransportBenchmark",
              "transport",
              "rawSocketVirtual",
              "transport vs raw loopback socket"),
          new Comparison(
              "RemoteGetMetaBenchmark",
              "getMeta",
              "ping",
              "remote getMeta(64) vs PING, mean latency"),
          new Comparison(
              "RemoteGetMetaBenchmark",
              "ping",
              "rawPingPong",
              "PING vs raw socket ping-pong, mean latency"),
          new Comparison(
              "LoaderBenchmark",
              "loader",
              "fetchLoop",
              "StreamingLoader vs fetch loop, micro-batches/s"),
          new Comparison(
              "CheckpointBenchmark", "save", "fileWrite", "checkpoint save vs file write"),
          new Comparison(
              "CheckpointBenchmark", "load", "fileRead", "checkpoint load vs file read"));

  private Figures() {}

  /**
   * Runs the benchmarks and prints the figures.
   *
   * @param args optional warm-up and measurement iteration counts, and a class-name regex
   * @throws RunnerException if JMH fails
   */
  public static void main(String[] args) throws RunnerException {
    int warmups = args.length > 0 ? Integer.parseInt(args[0]) : 2;
    int iterations = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    String only = args.length > 2 ? args[2] : ".*";
    boolean gc = args.length > 3 && args[3].equals("gc");
    ChainedOptionsBuilder options =
        new OptionsBuilder()
            .warmupIterations(warmups)
            .measurementIterations(iterations)
            .warmupTime(TimeValue.seconds(1))
            .measurementTime(TimeValue.seconds(2))
            .forks(1)
            .jvmArgsAppend("--enable-native-access=ALL-UNNAMED");
    if (gc) {
      options.addProfiler(GCProfiler.class);
    }
    boolean any = false;
    for (String benchmarkClass :
        List.of(
            "CopyIntoPoolBenchmark",
            "PackedCodecBenchmark",
            "SimpleStorageBenchmark",
            "ObjectStoreBenchmark",
            "MooncakeKvClientBenchmark",
            "ControllerBenchmark",
            "TransportBenchmark",
            "RemoteGetMetaBenchmark",
            "LoaderBenchmark",
            "CheckpointBenchmark")) {
      if (benchmarkClass.matches(only)) {
        options.include(Figures.class.getPackageName() + "." + benchmarkClass + "\\.");
        any = true;
      }
    }
    if (!any) {
      throw new IllegalArgumentException("no benchmark class matches " + only);
    }
    Collection<RunResult> results = new Runner(options.build()).run();
    print(index(results));
    printInterleaved(results);
    printLatency(results);
    if (gc) {
      printAllocation(results);
    }
  }

  /** Scores by "Class.method[params]". */
  private static Map<String, Result<?>> index(Collection<RunResult> results) {
    Map<String, Result<?>> byName = new LinkedHashMap<>();
    for (RunResult run : results) {
      var params = run.getParams();
      String label = params.getBenchmark();
      String simple = label.substring(label.lastIndexOf('.', label.lastIndexOf('.') - 1) + 1);
      List<String> values = new ArrayList<>();
      for (String key : params.getParamsKeys()) {
        values.add(key + "=" + params.getParam(key));
      }
      byName.put(simple + values, run.getPrimaryResult());
    }
    return byName;
  }

  private static void print(Map<String, Result<?>> scores) {
    System.out.println();
    System.out.println("Figures (ratio > 1: faster than the baseline measured in the same run)");
    for (Comparison c : COMPARISONS) {
      for (Map.Entry<String, Result<?>> entry : scores.entrySet()) {
        String key = entry.getKey();
        String prefix = c.benchmarkClass() + "." + c.method() + "[";
        if (!key.startsWith(prefix)) {
          continue;
        }
        String params = key.substring(prefix.length() - 1);
        Result<?> baseline = scores.get(c.benchmarkClass() + "." + c.baseline() + params);
        if (baseline == null) {
          continue;
        }
        double ratio = speedRatio(entry.getValue(), baseline);
        System.out.printf(
            Locale.ROOT,
            "  %-42s %-24s %12.3f %-10s vs %12.3f %-10s ratio %.2f%n",
            c.meaning(),
            params,
            entry.getValue().getScore(),
            entry.getValue().getScoreUnit(),
            baseline.getScore(),
            baseline.getScoreUnit(),
            ratio);
      }
    }
    for (Map.Entry<String, Result<?>> entry : scores.entrySet()) {
      if (entry.getKey().startsWith("ControllerBenchmark.")) {
        System.out.printf(
            Locale.ROOT,
            "  %-67s %12.3f %s%n",
            entry.getKey(),
            entry.getValue().getScore(),
            entry.getValue().getScoreUnit());
      }
    }
  }

  /** p50 and p99 of every benchmark measured in {@code SampleTime} mode, with the call count. */
  private static void printLatency(Collection<RunResult> results) {
    boolean header = false;
    for (RunResult run : results) {
      Result<?> primary = run.getPrimaryResult();
      if (run.getParams().getMode() != Mode.SampleTime) {
        continue;
      }
      if (!header) {
        System.out.println();
        System.out.println("Latency (sampled per call, same run)");
        header = true;
      }
      String label = run.getParams().getBenchmark();
      var statistics = primary.getStatistics();
      System.out.printf(
          Locale.ROOT,
          "  %-45s p50 %10.1f  p99 %10.1f  mean %10.1f %s  (n=%d)%n",
          label.substring(label.lastIndexOf('.', label.lastIndexOf('.') - 1) + 1),
          statistics.getPercentile(50),
          statistics.getPercentile(99),
          statistics.getMean(),
          primary.getScoreUnit(),
          statistics.getN());
    }
  }

  private static void printAllocation(Collection<RunResult> results) {
    System.out.println();
    System.out.println("Heap allocation per operation (gc.alloc.rate.norm)");
    for (RunResult run : results) {
      Result<?> norm = run.getSecondaryResults().get("gc.alloc.rate.norm");
      if (norm != null) {
        String label = run.getParams().getBenchmark();
        System.out.printf(
            Locale.ROOT,
            "  %-60s %s %14.1f %s%n",
            label.substring(label.lastIndexOf('.', label.lastIndexOf('.') - 1) + 1),
            run.getParams().getParamsKeys().isEmpty()
                ? ""
                : run.getParams().getParam(run.getParams().getParamsKeys().iterator().next()),
            norm.getScore(),
            norm.getScoreUnit());
      }
    }
  }

  /**
   * Figures of benchmarks that time a method and its baseline back to back in every invocation and
   * report both times as secondary results {@code <method>Nanos} / {@code <baseline>Nanos} (such as
   * {@code LoaderBenchmark.interleaved}): the ratio over all iterations, and its range over the
   * single iterations.
   */
  private static void printInterleaved(Collection<RunResult> results) {
    for (RunResult run : results) {
      String label = run.getParams().getBenchmark();
      if (!label.endsWith("LoaderBenchmark.interleaved")) {
        continue;
      }
      double loader = 0;
      double loop = 0;
      double min = Double.MAX_VALUE;
      double max = 0;
      for (BenchmarkResult benchmark : run.getBenchmarkResults()) {
        for (IterationResult iteration : benchmark.getIterationResults()) {
          Result<?> l = iteration.getSecondaryResults().get("loaderNanos");
          Result<?> f = iteration.getSecondaryResults().get("fetchLoopNanos");
          if (l == null || f == null || l.getScore() == 0) {
            continue;
          }
          loader += l.getScore();
          loop += f.getScore();
          double ratio = f.getScore() / l.getScore();
          min = Math.min(min, ratio);
          max = Math.max(max, ratio);
        }
      }
      if (loader > 0) {
        System.out.printf(
            Locale.ROOT,
            "  %-42s %-24s loader %8.1f s vs fetch loop %8.1f s   ratio %.2f (iterations %.2f to"
                + " %.2f)%n",
            "StreamingLoader vs fetch loop, interleaved",
            parameters(run),
            loader / 1e9,
            loop / 1e9,
            loop / loader,
            min,
            max);
      }
    }
  }

  /** The run's parameters as {@code [key=value, ..]}. */
  private static String parameters(RunResult run) {
    List<String> values = new ArrayList<>();
    for (String key : run.getParams().getParamsKeys()) {
      values.add(key + "=" + run.getParams().getParam(key));
    }
    return values.toString();
  }

  /** How many times faster {@code result} is than {@code baseline}. */
  private static double speedRatio(Result<?> result, Result<?> baseline) {
    boolean perTime = result.getScoreUnit().startsWith("ops/");
    return perTime
        ? result.getScore() / baseline.getScore()
        : baseline.getScore() / result.getScore();
  }
}
