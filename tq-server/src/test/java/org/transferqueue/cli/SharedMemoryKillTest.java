package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.remote.objectstore.RemoteObjectStore;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;
import org.transferqueue.testing.Await;
import org.transferqueue.transport.TransportConfig;

/**
 * kill -9 with shared memory in use (docs/RELIABILITY.md section 4): a client process that holds
 * leases on reply bodies and granted regions dies, and the servers' accounting returns to its
 * baseline while another client goes on; a storage server dies while a client transfers through its
 * segments, and the client gets typed errors, keeps no memory, and unmaps the dead server's
 * segments once its views are closed. Nothing is ever created in /dev/shm. Each test prints its
 * figures with a {@code [faults]} prefix.
 */
class SharedMemoryKillTest {
  private static final Pattern LEASES = Pattern.compile("leases mapped (\\d+)");
  private static final Pattern GRANTED = Pattern.compile("granted (\\d+) attached (\\d+)");

  /** 16 rows of 64 KiB: each storage server's part of a put or get is above the 64 KiB minimum. */
  private static final int KEYS = 16;

  private static final int FLOATS = 16_384;
  private static final int GRANTS = 2;
  private static final long GRANT_BYTES = 1L << 20;

  private static TransportConfig sharedMemoryServers() {
    return TransportConfig.builder()
        .bindHost("127.0.0.1")
        .bindPort(0)
        .sharedMemory(true)
        .sharedMemorySegmentBytes(8L << 20)
        .build();
  }

  /** Waits until every storage server's pool satisfies {@code condition}; dumps them if not. */
  private static void awaitPools(
      InJvmServers servers,
      java.util.function.Predicate<org.transferqueue.transport.SharedMemoryStats> condition,
      String what) {
    try {
      Await.until(() -> servers.sharedMemory().stream().allMatch(condition), what);
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + ": " + servers.sharedMemory(), e);
    }
  }

  @ParameterizedTest
  @EnumSource(StorageBackend.class)
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void shouldReturnTheServersToBaselineWhenAClientHoldingLeasesAndGrantsIsKilled(
      StorageBackend backend, @TempDir Path dir) throws Exception {
    try (RootAllocator allocator =
            RootAllocator.builder().name("servers").leakPolicy(LeakPolicy.THROW).build();
        InJvmServers servers = new InJvmServers(backend, allocator, sharedMemoryServers())) {
      Path config =
          Files.writeString(dir.resolve("client.yaml"), servers.yaml(""), StandardCharsets.UTF_8);
      // A first client leaves the servers with their connections closed and their first segments
      // created: what the servers hold with no client and nothing stored.
      try (TqClient first = TqClient.connect(TqConfigs.load(config))) {
        roundTrip(first, "warm", 0);
      }
      Await.until(() -> storedCellsOnly(servers), "the first client's connections closed");
      // Pools keep emptied segments mapped for reuse: compare what the servers hold besides them.
      long baseline = allocator.allocatedBytes() - servers.segmentBytes();

      try (TqClient other = TqClient.connect(TqConfigs.load(config));
          RoleProcess victim =
              RoleProcess.main(
                  "holder " + backend.configName(),
                  dir,
                  ShmClientProcess.class,
                  "hold",
                  config.toString(),
                  "victim",
                  Integer.toString(KEYS),
                  Integer.toString(FLOATS),
                  Integer.toString(GRANTS),
                  Long.toString(GRANT_BYTES))) {
        Matcher leases = LEASES.matcher(victim.awaitLine("leases mapped "));
        Matcher granted = GRANTED.matcher(victim.awaitLine("granted "));
        victim.awaitLine("holding");
        assertThat(leases.matches() && granted.matches()).isTrue();
        assertThat(Integer.parseInt(leases.group(1)))
            .as("segments the holder maps for its open result")
            .isPositive();
        assertThat(granted.group(1)).isEqualTo(Integer.toString(2 * GRANTS));
        assertThat(granted.group(2)).isEqualTo("2");
        long holding = allocator.allocatedBytes() - servers.segmentBytes();
        assertThat(servers.sharedMemory())
            .as("leases and grants the servers keep for the holder")
            .allSatisfy(
                s -> {
                  // The holder's raw grants, plus at most one spare grant per Java client
                  // connection (the other client's and the holder's own TqClient).
                  assertThat(s.grants()).isBetween((long) GRANTS, GRANTS + s.attachedConnections());
                  assertThat(s.leases()).isPositive();
                  assertThat(s.usedBytes()).isGreaterThanOrEqualTo(GRANTS * GRANT_BYTES);
                });

        // Another client works through the kill.
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger rounds = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        Thread worker =
            Thread.ofPlatform()
                .name("other client")
                .start(
                    () -> {
                      try {
                        for (int i = 1; !stop.get(); i++) {
                          roundTrip(other, "live", i);
                          rounds.incrementAndGet();
                        }
                      } catch (Throwable t) {
                        failures.add(t);
                      }
                    });
        Await.until(() -> rounds.get() >= 2 || !failures.isEmpty(), "the other client's rounds");
        victim.kill();
        int atKill = rounds.get();
        Await.until(
            () -> rounds.get() >= atKill + 4 || !failures.isEmpty(),
            "four more rounds of the other client after the kill");
        stop.set(true);
        worker.join(Duration.ofSeconds(30));
        assertThat(failures).as("the other client's failures").isEmpty();

        // The holder's leases and grants went with its connections (the live client may keep one
        // spare grant per connection); its rows stay stored until cleared, as any put's.
        // (A storage unit keeps the rows a same-host client wrote as its cells, in the pool, so its
        // pool's used bytes stay above the grants' until the rows are cleared.)
        awaitPools(
            servers,
            s -> s.leases() == 0 && s.grants() <= s.attachedConnections(),
            "no lease and no grant but the live client's spares left on the servers");
        other.kv().clear(ClientProcess.keys("k", KEYS), "victim");
        clearViews(other, backend, TqConfigs.load(config));
        System.out.println(
            "[faults] kill -9 a "
                + backend.configName()
                + " client holding "
                + leases.group(1)
                + " mapped segments of leases and "
                + granted.group(1)
                + " grants: servers held "
                + (holding - baseline)
                + " bytes over baseline besides their segments; the other client made "
                + (rounds.get() - atKill)
                + " round trips after the kill");
      }
      Await.until(
          () -> allocator.allocatedBytes() - servers.segmentBytes() == baseline,
          "servers' memory besides their segments back to the baseline "
              + baseline
              + ", now "
              + (allocator.allocatedBytes() - servers.segmentBytes()));
      // Connections close asynchronously: every grant and lease of the killed client goes with its
      // connections. What may stay is the spare grant the live client keeps per connection.
      Await.until(
          () ->
              servers.sharedMemory().stream()
                  .allMatch(s -> s.idle() && s.grants() <= s.attachedConnections()),
          "no lease and no grant but the live client's spares left on the servers");
      assertThat(SharedMappings.tqFilesInDevShm()).isEmpty();
    }
  }

  @ParameterizedTest
  @EnumSource(StorageBackend.class)
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void shouldFailTypedAndUnmapTheSegmentsWhenAServerIsKilledMidTransfer(
      StorageBackend backend, @TempDir Path dir) throws Exception {
    boolean simple = backend == StorageBackend.SIMPLE_STORAGE;
    try (ProcessCluster cluster =
            new ProcessCluster(dir, simple ? 2 : 0, simple ? 0 : 2, true, "");
        TqClient client =
            TqClient.builder()
                .config(cluster.tqConfig(backend))
                .leakPolicy(LeakPolicy.THROW)
                .connect()) {
      RoleProcess victim = simple ? cluster.unit(0) : cluster.node(0);
      roundTrip(client, "warm", 0);
      long baseline = client.allocator().allocatedBytes();
      HeldViews held =
          HeldViews.open(client, cluster.tqConfig(backend), client.allocator(), KEYS, FLOATS);
      try {
        Set<Long> victimSegments = SharedMappings.segmentInodes(victim.pid());
        assertThat(intersection(SharedMappings.segmentInodes(-1), victimSegments))
            .as("segments of %s this client maps for its open views", victim.name())
            .isNotEmpty();

        // Transfers in flight when the server dies.
        int threads = 2;
        AtomicInteger rounds = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> ended = new ConcurrentLinkedQueue<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          int id = t;
          workers.add(
              Thread.ofPlatform()
                  .name("transfer " + t)
                  .start(
                      () -> {
                        try {
                          for (int i = 1; ; i++) {
                            roundTrip(client, "t" + id, i);
                            rounds.incrementAndGet();
                          }
                        } catch (Throwable e) {
                          ended.add(e);
                        }
                      }));
        }
        Await.until(() -> rounds.get() >= threads || !ended.isEmpty(), "transfers running");
        assertThat(ended).as("failures before the kill").isEmpty();
        victim.kill();
        for (Thread worker : workers) {
          assertThat(worker.join(Duration.ofSeconds(60))).as(worker.getName() + " ended").isTrue();
        }
        assertThat(ended)
            .hasSize(threads)
            .allSatisfy(
                e ->
                    assertThat(e)
                        .isInstanceOfSatisfying(
                            TqException.class,
                            t ->
                                assertThat(t.code())
                                    .isIn(
                                        ErrorCode.CONNECTION_FAILED, ErrorCode.DEADLINE_EXCEEDED)));

        // The open views still read what was written: their mapping keeps the dead server's
        // memory alive, nothing is unmapped under them.
        assertThat(held.intact()).as("the open views' bytes").isTrue();
        assertThat(intersection(SharedMappings.segmentInodes(-1), victimSegments))
            .as("mappings kept while the views are open")
            .isNotEmpty();
        held.close();
        held = null;
        Await.until(
            () -> intersection(SharedMappings.segmentInodes(-1), victimSegments).isEmpty(),
            "the dead server's segments unmapped");
        // Without the dead server's connections the client may hold less than before; closing
        // it with LeakPolicy.THROW then proves that nothing else is outstanding.
        Await.until(
            () -> client.allocator().allocatedBytes() <= baseline,
            "client memory back to at most "
                + baseline
                + ", now "
                + client.allocator().allocatedBytes());
        System.out.println(
            "[faults] kill -9 "
                + victim.name()
                + " mid-transfer over shared memory: "
                + threads
                + " transfers ended "
                + ended.stream().map(e -> ((TqException) e).code().name()).sorted().toList()
                + "; its "
                + victimSegments.size()
                + " segments unmapped once the open views were closed");
      } finally {
        if (held != null) {
          held.close();
        }
      }
    }
    assertThat(SharedMappings.tqFilesInDevShm()).isEmpty();
  }

  /** A put of KEYS fresh rows, a get compared with them, a clear. */
  static void roundTrip(TqClient client, String prefix, int round) {
    List<String> keys = ClientProcess.keys(prefix + round + "-", KEYS);
    String partition = "p-" + prefix;
    try (Batch rows = ShmClientProcess.rows(client.allocator(), keys, FLOATS)) {
      client.kv().batchPut(keys, partition, rows, null);
    }
    try (Batch read = client.kv().batchGet(keys, partition, List.of(ShmClientProcess.FIELD))) {
      String diff = ShmClientProcess.difference(read, keys, FLOATS);
      if (diff != null) {
        throw new AssertionError("round " + round + " of " + prefix + ": " + diff);
      }
    }
    client.kv().clear(keys, partition);
  }

  /** Clears what {@link HeldViews} wrote for the holder: the rows or the objects. */
  private static void clearViews(TqClient client, StorageBackend backend, TqConfig config) {
    if (backend == StorageBackend.SIMPLE_STORAGE) {
      client.client().clearPartition("views");
      return;
    }
    try (RemoteObjectStore store =
        RemoteObjectStore.connect(
            config.network().storeNodeAddresses(),
            ConfigMapper.transport(config.network()),
            client.allocator())) {
      store.removeByRegex("^view/.*", true);
    }
  }

  private static Set<Long> intersection(Set<Long> a, Set<Long> b) {
    Set<Long> both = new HashSet<>(a);
    both.retainAll(b);
    return both;
  }

  private static boolean storedCellsOnly(InJvmServers servers) {
    return servers.sharedMemory().stream().allMatch(s -> s.attachedConnections() == 0);
  }
}
