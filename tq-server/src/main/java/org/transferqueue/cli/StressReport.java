package org.transferqueue.cli;

import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.transferqueue.server.stress.ChaosFigures;
import org.transferqueue.server.stress.ChaosPlan;
import org.transferqueue.server.stress.ChaosRole;
import org.transferqueue.server.stress.StressFlow;
import org.transferqueue.server.stress.StressPlan;
import org.transferqueue.server.stress.StressResult;

/** Renders the results of {@code tq stress} as tables and as a JSON document. */
final class StressReport {
  private StressReport() {}

  /**
   * Prints one table of operations and one summary line set per backend.
   *
   * @param out the destination
   * @param results one per backend
   */
  static void print(PrintWriter out, List<StressResult> results) {
    TextTable ops = new TextTable("backend", "op", "count", "GB", "p50 ms", "p99 ms", "max ms");
    for (StressResult r : results) {
      StressCommand.byLabel(r)
          .forEach(
              (label, f) ->
                  ops.row(
                      r.backend(),
                      label,
                      f.count(),
                      gb(f.bytes()),
                      ms(f.p50Nanos()),
                      ms(f.p99Nanos()),
                      ms(f.maxNanos())));
    }
    ops.print(out);
    out.println();
    TextTable summary =
        new TextTable(
            "backend",
            "clients",
            "seconds",
            "ops",
            "ops/s",
            "GB moved",
            "rows written",
            "rows verified",
            "lost",
            "corrupted",
            "errors",
            "leaked bytes");
    for (StressResult r : results) {
      long errors = r.errors().values().stream().mapToLong(Long::longValue).sum();
      summary.row(
          r.backend(),
          r.clients(),
          String.format(Locale.ROOT, "%.1f", r.seconds()),
          r.totalOperations(),
          String.format(Locale.ROOT, "%.0f", r.totalOperations() / Math.max(1e-9, r.seconds())),
          gb(r.totalBytes()),
          r.rowsWritten(),
          r.rowsVerified(),
          r.lost(),
          r.corrupted(),
          errors,
          r.leakedBytes());
    }
    summary.print(out);
    out.printf(
        Locale.ROOT,
        "%d cores, load average %.1f at the end (other processes share the cores)%n",
        Runtime.getRuntime().availableProcessors(),
        loadAverage());
    for (StressResult r : results) {
      out.println();
      out.printf("%s: lost: %d, corrupted: %d%n", r.backend(), r.lost(), r.corrupted());
      if (!r.errors().isEmpty()) {
        out.println(r.backend() + ": errors by code: " + r.errors());
      }
      List<String> rss = new ArrayList<>();
      r.peakRssBytes().forEach((name, bytes) -> rss.add(name + " " + mib(bytes)));
      out.println(
          r.backend()
              + ": peak RSS (VmHWM): "
              + String.join(", ", rss)
              + "; client off-heap peak "
              + mib(r.offHeapPeakBytes()));
      r.chaos().ifPresent(c -> printChaos(out, r, c));
      for (String problem : r.problems()) {
        out.println(r.backend() + ": " + problem.replaceAll("\\R", " "));
      }
    }
  }

  /** The kills of a chaos run, one line per recovery, and the summary figures. */
  private static void printChaos(PrintWriter out, StressResult r, ChaosFigures c) {
    out.println();
    TextTable kills =
        new TextTable("backend", "killed", "ready ms", "answering ms", "first op ms", "failure");
    for (ChaosFigures.Recovery k : c.recoveries()) {
      kills.row(
          r.backend(),
          k.name(),
          ms(k.readyNanos()),
          ms(k.answeringNanos()),
          ms(k.firstOpNanos()),
          k.failure() == null ? "" : k.failure().replaceAll("\\R", " "));
    }
    kills.print(out);
    List<String> byRole = new ArrayList<>();
    c.killsByRole().forEach((role, n) -> byRole.add(role.label() + " " + n));
    out.printf(
        "%s: chaos: durability %s, a SIGKILL every %s; kills: %s%n",
        r.backend(),
        c.durability(),
        StressCommand.describe(Duration.ofMillis(c.intervalMillis())),
        byRole.isEmpty() ? "none" : String.join(", ", byRole));
    out.printf(
        "%s: recovery, kill to PING answered: %s; kill to first client op: %s%n",
        r.backend(), percentiles(c.answering()), percentiles(c.firstOp()));
    out.printf(
        "%s: acknowledged writes lost: %d, wrong reads: %d, stranded rows: %d (of at most %d)%n",
        r.backend(), r.lost(), r.corrupted(), c.strandedRows(), c.strandedAllowance());
  }

  private static String percentiles(ChaosFigures.Percentiles p) {
    return p.count() == 0
        ? "n/a"
        : "p50 "
            + ms(p.p50Nanos())
            + " ms, p99 "
            + ms(p.p99Nanos())
            + " ms, max "
            + ms(p.maxNanos())
            + " ms ("
            + p.count()
            + ")";
  }

  private static Map<String, Object> chaosJson(StressResult r, ChaosFigures c) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("durability", c.durability());
    m.put("intervalSeconds", c.intervalMillis() / 1000.0);
    Map<String, Object> kills = new LinkedHashMap<>();
    c.killsByRole().forEach((role, n) -> kills.put(role.label(), n));
    m.put("kills", kills);
    List<Object> recoveries = new ArrayList<>();
    for (ChaosFigures.Recovery k : c.recoveries()) {
      Map<String, Object> o = new LinkedHashMap<>();
      o.put("role", k.role().label());
      o.put("process", k.name());
      o.put("readyMs", millis(k.readyNanos()));
      o.put("answeringMs", millis(k.answeringNanos()));
      o.put("firstOpMs", millis(k.firstOpNanos()));
      o.put("failure", k.failure());
      recoveries.add(o);
    }
    m.put("recoveries", recoveries);
    m.put("recoveryAnsweringMs", percentilesJson(c.answering()));
    m.put("recoveryFirstOpMs", percentilesJson(c.firstOp()));
    m.put("acknowledgedWritesLost", r.lost());
    m.put("wrongReads", r.corrupted());
    m.put("strandedRows", c.strandedRows());
    m.put("strandedAllowance", c.strandedAllowance());
    m.put("restartFailures", c.failures());
    return m;
  }

  private static Map<String, Object> percentilesJson(ChaosFigures.Percentiles p) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("count", p.count());
    m.put("p50", millis(p.p50Nanos()));
    m.put("p99", millis(p.p99Nanos()));
    m.put("max", millis(p.maxNanos()));
    return m;
  }

  /** Milliseconds, or null for an unknown (-1) duration. */
  private static Double millis(long nanos) {
    return nanos < 0 ? null : nanos / 1e6;
  }

  /**
   * The JSON document: the command, the plan and every result.
   *
   * @param command the command line as typed
   * @param plan the plan
   * @param chaos the chaos plan, or null without {@code --chaos}
   * @param results one per backend
   * @return a tree of maps, lists, strings and numbers for {@link Json#write}
   */
  static Map<String, Object> json(
      String command, StressPlan plan, ChaosPlan chaos, List<StressResult> results) {
    Map<String, Object> doc = new LinkedHashMap<>();
    doc.put("command", command);
    Map<String, Object> p = new LinkedHashMap<>();
    p.put("clients", plan.clients());
    p.put("connections", plan.connections());
    p.put("durationSeconds", plan.duration().toMillis() / 1000.0);
    p.put("rows", plan.rows());
    p.put("valueBytes", plan.valueBytes());
    p.put("opTimeoutSeconds", plan.opTimeout().toMillis() / 1000.0);
    p.put("verify", plan.verify());
    p.put("flows", plan.flows().stream().map(StressFlow::label).toList());
    p.put("seed", plan.seed());
    doc.put("plan", p);
    if (chaos != null) {
      Map<String, Object> c = new LinkedHashMap<>();
      c.put("roles", chaos.roles().stream().map(ChaosRole::label).toList());
      c.put("intervalSeconds", chaos.interval().toMillis() / 1000.0);
      c.put("durability", chaos.durability());
      c.put("journalSync", chaos.sync().orElse("default"));
      c.put("recoveryTimeoutSeconds", chaos.recoveryTimeout().toMillis() / 1000.0);
      doc.put("chaos", c);
    }
    Map<String, Object> machine = new LinkedHashMap<>();
    machine.put("jdk", System.getProperty("java.runtime.version"));
    machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    machine.put("cores", Runtime.getRuntime().availableProcessors());
    machine.put("loadAverageAtEnd", loadAverage());
    doc.put("machine", machine);
    List<Object> out = new ArrayList<>();
    for (StressResult r : results) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("backend", r.backend());
      m.put("clients", r.clients());
      m.put("connections", r.connections());
      m.put("seconds", r.seconds());
      m.put("iterations", r.iterations());
      Map<String, Object> ops = new LinkedHashMap<>();
      StressCommand.byLabel(r)
          .forEach(
              (label, f) -> {
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("count", f.count());
                o.put("bytes", f.bytes());
                o.put("p50Ms", f.p50Nanos() / 1e6);
                o.put("p99Ms", f.p99Nanos() / 1e6);
                o.put("maxMs", f.maxNanos() / 1e6);
                ops.put(label, o);
              });
      m.put("operations", ops);
      m.put("totalOperations", r.totalOperations());
      m.put("totalBytes", r.totalBytes());
      m.put("errors", new LinkedHashMap<>(r.errors()));
      m.put("rowsWritten", r.rowsWritten());
      m.put("rowsVerified", r.rowsVerified());
      m.put("lost", r.lost());
      m.put("corrupted", r.corrupted());
      m.put("leakedBytes", r.leakedBytes());
      m.put("offHeapPeakBytes", r.offHeapPeakBytes());
      m.put("peakRssBytes", new LinkedHashMap<>(r.peakRssBytes()));
      m.put("problems", r.problems());
      r.chaos().ifPresent(c -> m.put("chaos", chaosJson(r, c)));
      m.put("clean", r.clean());
      out.add(m);
    }
    doc.put("results", out);
    doc.put("clean", results.stream().allMatch(StressResult::clean));
    return doc;
  }

  /** The one-minute load average of the machine, or -1 where the platform does not say. */
  static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }

  private static String gb(long bytes) {
    return String.format(Locale.ROOT, "%.3f", bytes / 1e9);
  }

  private static String ms(long nanos) {
    return nanos < 0 ? "-" : String.format(Locale.ROOT, "%.2f", nanos / 1e6);
  }

  private static String mib(long bytes) {
    return bytes < 0 ? "unknown" : String.format(Locale.ROOT, "%.0f MiB", bytes / 1048576.0);
  }
}
