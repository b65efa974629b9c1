package org.transferqueue.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.transferqueue.Clock;
import org.transferqueue.JsonWriter;
import org.transferqueue.TqException;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.bench.BenchBackend;
import org.transferqueue.server.stress.ChaosPlan;
import org.transferqueue.server.stress.ChaosRole;
import org.transferqueue.server.stress.StressFlow;
import org.transferqueue.server.stress.StressOp;
import org.transferqueue.server.stress.StressPlan;
import org.transferqueue.server.stress.StressResult;
import org.transferqueue.server.stress.StressRunner;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq stress}: many concurrent clients put, fetch, get, verify and clear checksummed rows on
 * their own partitions and a shared one, against a running system ({@code --config}) or against
 * servers it starts as child processes on 127.0.0.1 for each {@code --backend}. Prints operations,
 * bytes, latency percentiles, errors by code, lost and corrupted rows and the peak memory of every
 * process, optionally as JSON too. With {@code --chaos} it kills one of the server processes with
 * SIGKILL every interval and restarts it while the clients run, and reports the kills, the recovery
 * times, acknowledged writes lost and wrong reads. Exit status: 0 for a clean run, 1 when anything
 * was lost or corrupted, an error happened (without {@code --chaos}: with it, errors of calls in
 * flight are expected, but every role must come back) or memory leaked, 2 for bad options (one line
 * on standard error).
 */
@Command(
    name = "stress",
    description = {
      "Run many concurrent clients that put, fetch, get, verify and clear checksummed rows.",
      "Without --config the controller and two storage servers of each backend run as child"
          + " processes on 127.0.0.1."
    })
final class StressCommand implements Callable<Integer> {
  /** Exit status of a run that lost or corrupted data, hit an error or leaked memory. */
  static final int EXIT_FAILED = 1;

  /** Exit status of bad options. */
  static final int EXIT_USAGE = 2;

  private static final Pattern SHORT_DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--config",
      description = "YAML configuration of a running system (controller and storage addresses).")
  Path config;

  @Option(
      names = "--backend",
      description =
          "Without --config: SimpleStorage, MooncakeStore or all (default all), each on its own"
              + " child-process servers.")
  String backend;

  @Option(
      names = "--clients",
      defaultValue = "64",
      description = "Concurrent clients, each a virtual thread (default ${DEFAULT-VALUE}).")
  int clients;

  @Option(
      names = "--connections",
      description = "Client instances the clients share round-robin (default min(clients, 16)).")
  Integer connections;

  @Option(
      names = "--duration",
      defaultValue = "30s",
      description =
          "How long clients start new iterations: 500ms, 30s, 5m, 1h or PT30S"
              + " (default ${DEFAULT-VALUE}).")
  String duration;

  @Option(
      names = "--rows",
      defaultValue = "4",
      description = "Rows per put (default ${DEFAULT-VALUE}).")
  int rows;

  @Option(
      names = "--value-bytes",
      defaultValue = "16384",
      description =
          "Widest payload row; own partitions cycle through 64, 256, 1024, .. up to it, the shared"
              + " partition uses it (default ${DEFAULT-VALUE}).")
  int valueBytes;

  @Option(
      names = "--op-timeout",
      defaultValue = "30s",
      description = "Longest wait of a blocking fetch (default ${DEFAULT-VALUE}).")
  String opTimeout;

  @Option(
      names = "--verify",
      description = "Check every row read against what was written (checksum, writer, sequence).")
  boolean verify;

  @Option(
      names = "--flows",
      defaultValue = "all",
      description =
          "Flows every client repeats, comma-separated: own (its own partition), shared (the"
              + " partition all clients share), kv (key-value calls on a shared partition), or all"
              + " (default ${DEFAULT-VALUE}).")
  String flows;

  @Option(names = "--seed", defaultValue = "42", description = "Seed of the random payloads.")
  long seed;

  @Option(names = "--json", description = "Write the plan and every figure to this file.")
  Path json;

  @Option(
      names = "--chaos",
      description =
          "Kill a server process with SIGKILL every --chaos-interval and restart it on its address"
              + " and journal while the clients run and verify; report acknowledged writes lost,"
              + " wrong reads and recovery times (loopback child processes only).")
  boolean chaos;

  @Option(
      names = "--chaos-role",
      defaultValue = "all",
      description =
          "Kinds of process to kill, comma-separated: controller, storage-unit, store-node, or all"
              + " (default ${DEFAULT-VALUE}: each kind in turn).")
  String chaosRole;

  @Option(
      names = "--chaos-interval",
      defaultValue = "20s",
      description = "Time between kills (default ${DEFAULT-VALUE}).")
  String chaosInterval;

  @Option(
      names = "--durability",
      description =
          "How the child processes keep state: journal (write-ahead journal of every acknowledged"
              + " change, the default with --chaos) or none (a killed role restarts empty).")
  String durability;

  @Option(
      names = "--journal-dir",
      description = "Base directory of the journals (default: a temporary directory per backend).")
  Path journalDir;

  @Option(
      names = "--journal-sync",
      description = "Sync policy of the journals: fsync or interval (default: the journal's).")
  String journalSync;

  @Option(
      names = "--recovery-timeout",
      defaultValue = "60s",
      description =
          "How long a client retries reads of acknowledged rows while a role is down or"
              + " recovering before it counts them as lost (default ${DEFAULT-VALUE}).")
  String recoveryTimeout;

  @Override
  public Integer call() {
    StressPlan plan = plan();
    Optional<ChaosPlan> chaosPlan = chaosPlan();
    List<BenchBackend> backends = backends(chaosPlan);
    TqConfig connectTo = config == null ? null : RoleRunner.load(spec.commandLine(), config);
    checkWritable();
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    out.printf(
        "tq stress: %s, %d clients on %d connections, %s, %d rows of up to %d bytes, flows %s,"
            + " verify %s%n",
        connectTo == null
            ? String.join(",", backends.stream().map(BenchBackend::configName).toList())
                + " (loopback child processes)"
            : connectTo.backend().storageBackend().configName() + " at " + config,
        plan.clients(),
        plan.connections(),
        describe(plan.duration()),
        plan.rows(),
        plan.valueBytes(),
        String.join(",", plan.flows().stream().map(StressFlow::label).toList()),
        plan.verify() ? "on" : "off");
    chaosPlan.ifPresent(
        c ->
            out.printf(
                "chaos: SIGKILL of %s every %s, durability %s, clients retry for up to %s%n",
                String.join(",", c.roles().stream().map(ChaosRole::label).toList()),
                describe(c.interval()),
                c.durability(),
                describe(c.recoveryTimeout())));
    out.flush();
    StressRunner runner = new StressRunner(plan, Clock.SYSTEM);
    List<StressResult> results = new ArrayList<>();
    try {
      if (connectTo != null) {
        results.add(runner.run(connectTo, Map::of));
      } else {
        for (BenchBackend each : backends) {
          results.add(
              chaosPlan.isPresent()
                  ? runner.runChaos(ChildProcesses.javaCommand(), each, chaosPlan.get())
                  : runner.runLoopback(ChildProcesses.javaCommand(), each));
        }
      }
    } catch (TqException e) {
      err.println("tq stress: error: " + e.getMessage().replaceAll("\\R", " "));
      err.flush();
      return EXIT_FAILED;
    }
    StressReport.print(out, results);
    boolean clean = results.stream().allMatch(StressResult::clean);
    if (json != null) {
      try {
        Files.writeString(
            json,
            JsonWriter.COMPACT.write(
                StressReport.json(command(), plan, chaosPlan.orElse(null), results)),
            StandardCharsets.UTF_8);
        out.println("wrote " + json);
      } catch (IOException e) {
        err.println("tq stress: cannot write " + json + ": " + e.getMessage());
        err.flush();
        clean = false;
      }
    }
    out.flush();
    return clean ? 0 : EXIT_FAILED;
  }

  private StressPlan plan() {
    try {
      return new StressPlan(
          clients,
          connections != null ? connections : Math.min(clients, 16),
          parseDuration("--duration", duration),
          rows,
          valueBytes,
          parseDuration("--op-timeout", opTimeout),
          verify,
          seed,
          StressFlow.parse(flows));
    } catch (TqException e) {
      throw usage(e.getMessage());
    }
  }

  private Optional<ChaosPlan> chaosPlan() {
    if (!chaos) {
      if (durability != null || journalDir != null || journalSync != null) {
        throw usage("--durability, --journal-dir and --journal-sync apply only with --chaos");
      }
      return Optional.empty();
    }
    if (config != null) {
      throw usage("--chaos kills the servers it starts itself: it does not apply with --config");
    }
    String mode = durability == null ? "journal" : durability.trim().toLowerCase(Locale.ROOT);
    if (!mode.equals("journal") && !mode.equals("none")) {
      throw usage("--durability=" + durability + " is not one of [none, journal]");
    }
    try {
      return Optional.of(
          new ChaosPlan(
              ChaosRole.parse(chaosRole),
              parseDuration("--chaos-interval", chaosInterval),
              mode.equals("journal"),
              Optional.ofNullable(journalDir),
              Optional.ofNullable(journalSync),
              parseDuration("--recovery-timeout", recoveryTimeout)));
    } catch (TqException e) {
      throw usage(e.getMessage());
    }
  }

  private List<BenchBackend> backends(Optional<ChaosPlan> chaosPlan) {
    if (config != null) {
      if (backend != null) {
        throw usage("--backend applies only without --config (the file names the backend)");
      }
      return List.of();
    }
    List<BenchBackend> chosen;
    try {
      chosen = BenchBackend.parse(backend == null ? "all" : backend);
    } catch (TqException e) {
      throw usage("--backend: " + e.getMessage());
    }
    if (chaosPlan.isEmpty()) {
      return chosen;
    }
    // Only backends in which some chosen role runs (the storage roles belong to one backend each).
    Set<ChaosRole> roles = chaosPlan.get().roles();
    List<BenchBackend> out =
        chosen.stream().filter(b -> roles.stream().anyMatch(r -> r.runsIn(b))).toList();
    if (out.isEmpty()) {
      throw usage(
          "--chaos-role="
              + chaosRole
              + " has no process in --backend="
              + backend
              + " (storage-unit is SimpleStorage's, store-node MooncakeStore's)");
    }
    return out;
  }

  private void checkWritable() {
    if (json == null) {
      return;
    }
    Path parent = json.toAbsolutePath().getParent();
    if (parent == null || !Files.isDirectory(parent) || !Files.isWritable(parent)) {
      throw usage("--json " + json + ": the directory " + parent + " is not writable");
    }
  }

  /** Parses {@code 500ms}, {@code 30s}, {@code 5m}, {@code 1h} or an ISO-8601 duration. */
  Duration parseDuration(String option, String text) {
    Matcher m = SHORT_DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
    try {
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          default -> Duration.ofHours(n);
        };
      }
      return Duration.parse(text.trim());
    } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
      throw usage(option + "=" + text + " is not a duration (e.g. 500ms, 30s, 5m, 1h, PT30S)");
    }
  }

  private CommandLine.ParameterException usage(String message) {
    return new CommandLine.ParameterException(spec.commandLine(), message);
  }

  static String describe(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }

  private String command() {
    List<String> original = spec.commandLine().getParseResult().originalArgs();
    int own = original.indexOf(spec.name()) + 1;
    List<String> words = new ArrayList<>(List.of("tq", spec.name()));
    words.addAll(original.subList(own, original.size()));
    return String.join(" ", words);
  }

  /** Names each op for the JSON and the table. */
  static Map<String, StressResult.OpFigures> byLabel(StressResult result) {
    Map<String, StressResult.OpFigures> out = new LinkedHashMap<>();
    for (StressOp op : StressOp.values()) {
      out.put(op.label(), result.operations().get(op));
    }
    return out;
  }
}
