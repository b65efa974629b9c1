package org.transferqueue.server.stress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.transferqueue.Clock;
import org.transferqueue.TqException;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.server.bench.BenchBackend;
import org.transferqueue.server.bench.LoopbackServers;
import org.transferqueue.server.bench.PeakRss;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.transport.TransportClient;

/**
 * Runs a {@link StressPlan} against a running system: connects {@code connections} clients, starts
 * {@code clients} {@link StressClient}s on virtual threads that share them round-robin, waits for
 * them to pass the deadline, drains what is left in the shared partition, and reports. {@link
 * #runLoopback} first starts the controller and two storage servers of a backend as child processes
 * on 127.0.0.1 (as {@code tq bench --mode loopback}) and stops them afterwards.
 *
 * <p>The data of every put comes from one pooled allocator owned by the run, so blocks are reused
 * from batch to batch; at the end that allocator and every client's must have nothing outstanding,
 * otherwise the difference is reported as leaked. Not thread-safe: one run at a time.
 */
public final class StressRunner {
  private static final Duration DRAIN_WAIT = Duration.ofMillis(500);

  private final StressPlan plan;
  private final Clock nanoClock;

  /**
   * Creates a runner.
   *
   * @param plan what to run
   * @param nanoClock the time source of the deadline and every latency, e.g. {@code Clock.SYSTEM}
   */
  public StressRunner(StressPlan plan, Clock nanoClock) {
    this.plan = Objects.requireNonNull(plan, "plan");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
  }

  /**
   * Starts the servers of a backend as child processes, runs the plan against them, and stops them.
   *
   * @param tq the command that runs {@code tq} in a child JVM
   * @param backend the backend
   * @return the figures, with the peak memory of the controller and both storage servers
   * @throws TqException {@code CONNECTION_FAILED} when a server does not start
   */
  public StressResult runLoopback(List<String> tq, BenchBackend backend) {
    Path dir = tempDirectory();
    try (LoopbackServers servers = LoopbackServers.start(tq, backend, serverConfig(backend), dir)) {
      return run(servers.clientConfig(), servers::peakRssBytes, Outages.none(nanoClock), null);
    } finally {
      deleteTree(dir);
    }
  }

  /**
   * Starts the servers of a backend as child processes with the durability of a chaos plan, runs
   * the plan against them while a {@link ChaosConductor} kills one of them with SIGKILL every
   * interval and restarts it, and stops them.
   *
   * @param tq the command that runs {@code tq} in a child JVM
   * @param backend the backend
   * @param chaos which roles to kill, how often, with which durability
   * @return the figures, with the chaos figures: kills, recovery times, stranded rows
   * @throws TqException {@code CONNECTION_FAILED} when a server does not start
   */
  public StressResult runChaos(List<String> tq, BenchBackend backend, ChaosPlan chaos) {
    Path dir = tempDirectory();
    try {
      Path journals =
          chaos.journalDir().isPresent()
              ? Files.createTempDirectory(
                  Files.createDirectories(chaos.journalDir().get()),
                  "tq-stress-" + backend.configName() + "-")
              : dir.resolve("journal");
      try (LoopbackServers servers =
              LoopbackServers.start(tq, backend, serverConfig(backend), chaos.yaml(journals), dir);
          RootAllocator pings =
              RootAllocator.builder().name("stress-chaos").leakPolicy(LeakPolicy.LOG).build();
          TransportClient pinger =
              new TransportClient(
                  ConfigMapper.transport(servers.clientConfig().network()), pings)) {
        Outages outages = Outages.chaos(nanoClock, chaos, servers.size() - 1);
        return run(
            servers.clientConfig(),
            servers::peakRssBytes,
            outages,
            new Chaos(chaos, () -> new ChaosConductor(servers, chaos, outages, pinger, nanoClock)));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      deleteTree(dir);
    }
  }

  private static Path tempDirectory() {
    try {
      return Files.createTempDirectory("tq-stress");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The configuration the loopback servers of a backend start from: a MooncakeStore segment per
   * node that holds four times the data all clients can have in flight at once (at least 64 MiB).
   */
  TqConfig serverConfig(BenchBackend backend) {
    long inFlight = 2L * plan.clients() * plan.batchBytesBound();
    long segment = Math.max(64L << 20, 2 * inFlight);
    return TqConfigs.parse(
        "backend:\n"
            + "  storage_backend: "
            + backend.configName()
            + "\n  MooncakeStore:\n"
            + "    global_segment_size: "
            + segment
            + "\n    local_buffer_size: "
            + segment
            + "\n");
  }

  /**
   * Runs the plan against the system a configuration names.
   *
   * @param config the client configuration: controller and storage addresses, backend
   * @param serverPeakRss reads the peak resident memory of the servers, by name, just before they
   *     stop; an empty map when they run elsewhere
   * @return the figures
   * @throws TqException when the controller cannot be reached
   */
  public StressResult run(TqConfig config, ServerMemory serverPeakRss) {
    return run(config, serverPeakRss, Outages.none(nanoClock), null);
  }

  /** The chaos of a run: its plan and how to start its conductor once the clients run. */
  private record Chaos(ChaosPlan plan, Supplier<ChaosConductor> conductor) {}

  private StressResult run(
      TqConfig config, ServerMemory serverPeakRss, Outages outages, Chaos chaos) {
    StressStats stats = new StressStats();
    SharedLedger ledger = new SharedLedger();
    List<TqClient> connections = new ArrayList<>();
    long leaked = 0;
    long offHeapPeak = 0;
    double seconds;
    long iterations = 0;
    try (RootAllocator data =
        RootAllocator.builder().name("stress-data").leakPolicy(LeakPolicy.LOG).build()) {
      try {
        for (int i = 0; i < plan.connections(); i++) {
          connections.add(TqClient.builder().config(config).leakPolicy(LeakPolicy.LOG).connect());
        }
        List<StressClient> clients = new ArrayList<>(plan.clients());
        long start = nanoClock.nanoTime();
        long deadline = start + plan.duration().toNanos();
        // Partition names of this run: rows an aborted earlier run left behind are never read.
        String runTag = Long.toString(start & 0xFFFFFFFFL, 36);
        for (int i = 0; i < plan.clients(); i++) {
          clients.add(
              new StressClient(
                  i,
                  connections.get(i % connections.size()).client(),
                  connections.get(i % connections.size()).kv(),
                  data,
                  plan,
                  stats,
                  ledger,
                  outages,
                  nanoClock,
                  deadline,
                  runTag));
        }
        ChaosConductor conductor = chaos == null ? null : chaos.conductor().get();
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
          clients.forEach(threads::execute);
        } finally {
          // Stops the kills and brings every role back before the drain.
          if (conductor != null) {
            conductor.close();
          }
        }
        seconds = (nanoClock.nanoTime() - start) / 1e9;
        for (StressClient client : clients) {
          iterations += client.iterations();
        }
        MetaClient first = connections.getFirst().client();
        String shared = StressClient.sharedPartition(runTag);
        counted(stats, () -> clients.getFirst().drainShared(DRAIN_WAIT));
        counted(stats, () -> first.clearPartition(shared));
        counted(stats, () -> first.clearPartition(StressClient.kvPartition(runTag)));
      } finally {
        for (TqClient connection : connections) {
          offHeapPeak += connection.allocator().peakBytes();
        }
        leaked += closeAll(connections, stats);
      }
      leaked += data.allocatedBytes();
      offHeapPeak += data.peakBytes();
    }
    if (ledger.unread() > 0) {
      stats.lost(ledger.unread(), "shared rows never read, e.g. " + ledger.sampleUnread(5));
    }
    Optional<ChaosFigures> chaosFigures =
        chaos == null
            ? Optional.empty()
            : Optional.of(
                new ChaosFigures(
                    chaos.plan().durability(),
                    chaos.plan().interval().toMillis(),
                    outages.recoveries(),
                    ledger.strandedRows(),
                    ledger.strandedAllowance()));
    Map<String, Long> rss = new LinkedHashMap<>();
    rss.put("client", PeakRss.ownPeakRssBytes());
    rss.putAll(serverPeakRss.peakRssBytes());
    return new StressResult(
        config.backend().storageBackend().configName(),
        plan.clients(),
        plan.connections(),
        plan.rows(),
        plan.valueBytes(),
        seconds,
        iterations,
        stats.figures(),
        stats.errors(),
        stats.rowsWritten(),
        stats.rowsVerified(),
        stats.lost(),
        stats.corrupted(),
        leaked,
        offHeapPeak,
        rss,
        stats.problems(),
        chaosFigures);
  }

  /** The peak resident memory of the servers of a run. */
  @FunctionalInterface
  public interface ServerMemory {
    /**
     * Reads the figures now.
     *
     * @return bytes by server name, -1 where unknown
     */
    Map<String, Long> peakRssBytes();
  }

  /** Runs an end-of-run step, counting its error by code instead of ending the report. */
  private static void counted(StressStats stats, Runnable step) {
    try {
      step.run();
    } catch (TqException e) {
      stats.error(e.code().name(), "after the run: " + e.getMessage());
    }
  }

  /** Closes the clients; returns the bytes they still had allocated (leaks). */
  private static long closeAll(List<TqClient> connections, StressStats stats) {
    long leaked = 0;
    for (TqClient connection : connections) {
      try {
        connection.close();
      } catch (TqException e) {
        stats.error(e.code().name(), "closing a client: " + e.getMessage());
      }
      leaked += connection.allocator().allocatedBytes();
    }
    return leaked;
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(path);
      }
    } catch (IOException e) {
      // The temporary directory holds only the children's configuration and error files.
    }
  }
}
