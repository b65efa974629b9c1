package org.transferqueue.server.stress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import org.transferqueue.Clock;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.TqException;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.server.bench.BenchBackend;
import org.transferqueue.server.bench.LoopbackServers;
import org.transferqueue.server.bench.PeakRss;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DenseColumn;

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
    Path dir;
    try {
      dir = Files.createTempDirectory("tq-stress");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    try (LoopbackServers servers = LoopbackServers.start(tq, backend, serverConfig(backend), dir)) {
      return run(servers.clientConfig(), servers::peakRssBytes);
    } finally {
      deleteTree(dir);
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
                  nanoClock,
                  deadline,
                  runTag));
        }
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
          clients.forEach(threads::execute);
        }
        seconds = (nanoClock.nanoTime() - start) / 1e9;
        for (StressClient client : clients) {
          iterations += client.iterations();
        }
        MetaClient first = connections.getFirst().client();
        String shared = StressClient.sharedPartition(runTag);
        counted(stats, () -> drainShared(first, shared, stats, ledger));
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
        stats.problems());
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

  /**
   * Reads what clients left ready in the shared partition (after an error stopped a client between
   * its put and its fetch), so that only rows nobody can read count as lost.
   */
  private void drainShared(
      MetaClient client, String partition, StressStats stats, SharedLedger ledger) {
    while (ledger.unread() > 0) {
      BatchMeta fetched;
      try {
        fetched =
            client.getMeta(
                GetMetadataRequest.fetch(partition, StressClient.FIELDS, StressClient.TASK, 1)
                    .withTimeout(DRAIN_WAIT));
      } catch (DeadlineExceededException e) {
        return; // nothing ready: what the ledger still holds is lost
      }
      if (fetched.isEmpty()) {
        return;
      }
      try (Batch read = client.getData(fetched)) {
        long writer = -1;
        long sequence = -1;
        if (read.rowCount() == 1) {
          MemorySegment row = ((DenseColumn) read.column("payload")).tensor().segment();
          if (StressPayload.check(row) == StressPayload.Verdict.OK) {
            writer = StressPayload.clientId(row);
            sequence = StressPayload.sequence(row);
          }
        }
        if (writer < 0
            || ledger.claim(writer, sequence, fetched.globalIndex(0))
                == SharedLedger.Claim.NOT_PENDING) {
          stats.corrupted(partition + " index " + fetched.globalIndex(0) + ": bad row in drain");
        }
      }
      client.clearSamples(fetched);
    }
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
