package org.transferqueue.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.transferqueue.Clock;
import org.transferqueue.TqException;
import org.transferqueue.server.bench.BenchBackend;
import org.transferqueue.server.bench.BenchMode;
import org.transferqueue.server.bench.BenchPlan;
import org.transferqueue.server.bench.BenchReport;
import org.transferqueue.server.bench.BenchRunner;
import org.transferqueue.server.bench.BenchSize;
import org.transferqueue.server.bench.ChartReporter;
import org.transferqueue.server.bench.CsvReporter;
import org.transferqueue.server.bench.JsonReporter;
import org.transferqueue.server.bench.LoopbackCommands;
import org.transferqueue.server.bench.MemoryProbe;
import org.transferqueue.server.bench.TableReporter;
import org.transferqueue.server.bench.WarmupPolicy;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq bench}: upstream's perftest workload (key-value batch put, list, batch get and clear)
 * over a backend x mode matrix, with a memory-copy baseline measured in the same run, printed as a
 * table and optionally written as JSON, CSV and a PNG chart.
 */
@Command(
    name = "bench",
    description = {
      "Measure key-value put/get throughput of the storage backends against a memory-copy baseline.",
      "Presets: tiny (128x4x1024, 2 MiB), small (1024x9x8192, 288 MiB),"
          + " medium (4096x15x32768, 7.5 GiB)."
    })
final class BenchCommand implements Callable<Integer> {
  /** Exit status when the machine cannot hold the requested size. */
  static final int EXIT_MEMORY = 3;

  private final MemoryProbe probe;

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--preset",
      split = ",",
      defaultValue = "small",
      description = "Data sizes, comma-separated: tiny, small, medium (default ${DEFAULT-VALUE}).")
  List<String> presets;

  @Option(names = "--batch", description = "Keys per batch; overrides the preset's.")
  Integer batch;

  @Option(names = "--fields", description = "Fields per key; overrides the preset's.")
  Integer fields;

  @Option(names = "--seq-len", description = "Elements per row; overrides the preset's.")
  Integer seqLen;

  @Option(
      names = "--complex",
      description = "Mixed fields: a third float32 tensors, a third jagged rows, a third strings.")
  boolean complex;

  @Option(
      names = "--iterations",
      defaultValue = "4",
      description = "Iterations per backend and mode (default ${DEFAULT-VALUE}).")
  int iterations;

  @Option(
      names = "--warmup",
      defaultValue = "auto",
      description =
          "Iterations per backend and mode run before the measured ones and kept out of the means:"
              + " a number, or auto = at least 3 and then until the JIT compilers of the case's"
              + " processes used at most 5%% of an iteration's CPU, at most 30"
              + " (default ${DEFAULT-VALUE}); their timings go to the JSON as \"warmup\".")
  String warmup;

  @Option(
      names = "--backend",
      defaultValue = "SimpleStorage",
      description = "SimpleStorage, MooncakeStore or all (default ${DEFAULT-VALUE}).")
  String backend;

  @Option(
      names = "--mode",
      defaultValue = "embedded",
      description =
          "embedded, loopback, shm, a comma-separated list (e.g. loopback,shm) or all (default"
              + " ${DEFAULT-VALUE}); loopback starts the controller and two storage servers as"
              + " child processes on 127.0.0.1 and moves every byte over TCP, shm starts the same"
              + " servers with shared memory on and compares with a memory copy and, when both"
              + " run, with loopback.")
  String mode;

  @Option(names = "--config", description = "YAML configuration every case starts from.")
  Path config;

  @Option(names = "--seed", defaultValue = "42", description = "Seed of the generated values.")
  long seed;

  @Option(names = "--json", description = "Write every figure, the configuration and the machine.")
  Path json;

  @Option(names = "--csv", description = "Write one row per iteration with upstream's columns.")
  Path csv;

  @Option(names = "--chart", description = "Draw a grouped bar chart to this PNG file.")
  Path chart;

  BenchCommand() {
    this(MemoryProbe.system());
  }

  BenchCommand(MemoryProbe probe) {
    this.probe = probe;
  }

  @Override
  public Integer call() {
    BenchPlan plan = plan();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    BenchProgress progress = new BenchProgress(out, System.console() != null);
    BenchRunner runner =
        new BenchRunner(
            plan,
            probe,
            progress,
            Clock.SYSTEM,
            new LoopbackCommands(
                ChildProcesses.javaCommand(), ChildProcesses.javaCommand(LoopbackReceiver.class)));
    try {
      runner.checkMemory();
    } catch (TqException e) {
      err.println("tq bench: refused: " + e.getMessage());
      err.flush();
      return EXIT_MEMORY;
    }
    out.printf(
        "tq bench: %s x %s x %s, %d iterations after %s%n",
        String.join(",", plan.sizes().stream().map(BenchSize::label).toList()),
        String.join(",", plan.backends().stream().map(BenchBackend::configName).toList()),
        String.join(",", plan.modes().stream().map(BenchMode::optionName).toList()),
        plan.iterations(),
        plan.warmup().describe());
    out.flush();
    BenchReport report;
    try {
      report = runner.run();
    } finally {
      progress.close();
    }
    out.print(TableReporter.render(report));
    try {
      if (json != null) {
        JsonReporter.write(report, json);
        out.println("wrote " + json);
      }
      if (csv != null) {
        CsvReporter.write(report, csv);
        out.println("wrote " + csv);
      }
      if (chart != null) {
        ChartReporter.write(report, chart);
        out.println("wrote " + chart);
      }
    } catch (UncheckedIOException e) {
      err.println("tq bench: " + e.getMessage());
      err.flush();
      return 1;
    } finally {
      out.flush();
    }
    return 0;
  }

  private String command() {
    // The original arguments are those of the whole command line: drop what precedes "bench".
    List<String> original = spec.commandLine().getParseResult().originalArgs();
    int own = original.indexOf(spec.name()) + 1;
    List<String> words = new ArrayList<>(List.of("tq", spec.name()));
    words.addAll(original.subList(own, original.size()));
    return String.join(" ", words);
  }

  private void checkWritable(String option, Path file) {
    if (file == null) {
      return;
    }
    Path parent = file.toAbsolutePath().getParent();
    if (parent == null || !Files.isDirectory(parent) || !Files.isWritable(parent)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          option + " " + file + ": the directory " + parent + " does not exist or is not writable");
    }
  }

  private BenchPlan plan() {
    try {
      List<BenchSize> sizes = new ArrayList<>();
      for (String name : presets) {
        BenchSize size = BenchSize.preset(name).withOverrides(batch, fields, seqLen);
        if (!sizes.contains(size)) {
          sizes.add(size);
        }
      }
      String yaml = "";
      if (config != null) {
        yaml = Files.readString(config, StandardCharsets.UTF_8);
      }
      BenchPlan plan =
          new BenchPlan(
              sizes,
              complex,
              BenchBackend.parse(backend),
              BenchMode.parse(mode),
              BenchMode.skipped(mode),
              iterations,
              WarmupPolicy.parse(warmup),
              seed,
              yaml,
              config == null ? null : config.toString(),
              Map.copyOf(System.getenv()),
              command());
      // Fail on a bad configuration file or an unwritable output now rather than after the run.
      plan.caseConfig(plan.backends().getFirst(), sizes.getFirst(), 1);
      checkWritable("--json", json);
      checkWritable("--csv", csv);
      checkWritable("--chart", chart);
      return plan;
    } catch (TqException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage(), e);
    } catch (IOException e) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--config " + config + " cannot be read: " + e, e);
    }
  }
}
