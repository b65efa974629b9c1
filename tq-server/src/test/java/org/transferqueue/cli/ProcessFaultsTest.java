package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.remote.storage.RemoteSimpleStorage;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;
import org.transferqueue.transport.TransportConfig;

/**
 * Faults of real processes during a workload: SIGKILL of a store node (then restarted: it rejoins),
 * of the controller (then restarted and loaded from the last checkpoint), and SIGSTOP of a storage
 * unit (a peer that stops reading). Each kill prints the time until every client process had its
 * typed error and what was still readable ({@code [faults]} lines).
 */
@Tag("slow")
class ProcessFaultsTest {
  private static final Pattern ERROR = Pattern.compile("error (\\w+) (\\d+) (\\d+) .*");
  private static final Pattern READABLE = Pattern.compile("readable (\\d+)/(\\d+) (.*)");
  private static final int KEYS = 32;
  private static final int CLIENTS = 2;

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void shouldFailClientsTypedWhenAStoreNodeIsKilledAndServeAgainOnceItRejoins(@TempDir Path dir) {
    try (ProcessCluster cluster = new ProcessCluster(dir, 0, 2, "");
        TqClient survivor = TqClient.connect(cluster.tqConfig(StorageBackend.MOONCAKE_STORE))) {
      write(survivor, "node", ClientProcess.keys("k", KEYS));
      List<RoleProcess> workloads = startWorkloads(cluster, StorageBackend.MOONCAKE_STORE, "node");

      long killedAt = System.currentTimeMillis();
      cluster.node(0).kill();
      List<Integer> readable =
          awaitErrors(
              "store node 0",
              workloads,
              killedAt,
              EnumSet.of(ErrorCode.CONNECTION_FAILED, ErrorCode.DEADLINE_EXCEEDED));
      // A key is readable when both its cells' objects live on node 1; none reads wrong.
      assertThat(readable).allSatisfy(r -> assertThat(r).isLessThan(KEYS));

      cluster.restartNode(0);
      // The client that was connected before the kill reconnects: new keys on both nodes work.
      List<String> fresh = ClientProcess.keys("after-", KEYS);
      write(survivor, "node", fresh);
      assertThat(ClientProcess.readable(survivor.kv(), "node", fresh))
          .startsWith("readable " + KEYS + "/" + KEYS);
      String old = ClientProcess.readable(survivor.kv(), "node", ClientProcess.keys("k", KEYS));
      System.out.println("[faults] store node 0 restarted empty: old keys " + old);
    }
  }

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void shouldFailClientsTypedWhenTheControllerIsKilledAndRestoreTheLastCheckpoint(
      @TempDir Path dir) {
    try (ProcessCluster cluster = new ProcessCluster(dir, 2, 0, "");
        TqClient survivor = TqClient.connect(cluster.tqConfig(StorageBackend.SIMPLE_STORAGE))) {
      List<String> keys = ClientProcess.keys("k", KEYS);
      write(survivor, "ctl", keys);
      Path checkpoint = dir.resolve("checkpoint");
      String config = cluster.config(StorageBackend.SIMPLE_STORAGE).toString();
      RunningSystem.Result saved =
          RunningSystem.run(
              "checkpoint", "save", "--dir", checkpoint.toString(), "--config", config);
      assertThat(saved.status()).as(saved.err()).isZero();
      List<RoleProcess> workloads = startWorkloads(cluster, StorageBackend.SIMPLE_STORAGE, "ctl");

      long killedAt = System.currentTimeMillis();
      cluster.controller().kill();
      List<Integer> readable = awaitErrors("controller", workloads, killedAt);
      // Without the controller no key can be resolved.
      assertThat(readable).containsOnly(0);

      cluster.restartController();
      // The old client reconnects to the new, empty controller...
      assertThat(survivor.kv().list(null)).isEmpty();
      // ...which the last checkpoint restores, with the units' data.
      RunningSystem.Result loaded =
          RunningSystem.run(
              "checkpoint", "load", "--dir", checkpoint.toString(), "--config", config);
      assertThat(loaded.status()).as(loaded.err()).isZero();
      assertThat(ClientProcess.readable(survivor.kv(), "ctl", keys))
          .isEqualTo("readable " + KEYS + "/" + KEYS + " {}");
      System.out.println(
          "[faults] controller restarted and loaded the checkpoint: ctl keys "
              + ClientProcess.readable(survivor.kv(), "ctl", keys));
    }
  }

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void shouldCutOffAPausedStorageUnitByTheDeadlineAndServeAgainWhenItResumes(@TempDir Path dir) {
    try (ProcessCluster cluster = new ProcessCluster(dir, 2, 0, "")) {
      TqConfig config = cluster.tqConfig(StorageBackend.SIMPLE_STORAGE);
      Duration deadline = Duration.ofSeconds(2);
      TransportConfig transport =
          ConfigMapper.transportBuilder(config.network()).defaultCallTimeout(deadline).build();
      StorageManagerRegistry backends =
          StorageManagerRegistry.builder()
              .register(
                  StorageManagerRegistry.SIMPLE_STORAGE,
                  RemoteSimpleStorage.factory(config.network().storageUnitAddresses(), transport))
              .build();
      try (TqClient tq = TqClient.builder().config(config).storageBackends(backends).connect()) {
        List<String> keys = ClientProcess.keys("k", KEYS);
        write(tq, "pause", keys);
        List<String> unit0 = new ArrayList<>();
        List<String> unit1 = new ArrayList<>();
        List<Long> indexes = tq.client().resolveKeys("pause", keys, false).globalIndexes();
        for (int i = 0; i < KEYS; i++) {
          (indexes.get(i) % 2 == 0 ? unit0 : unit1).add(keys.get(i));
        }
        int threadsBefore = Thread.activeCount();

        cluster.unit(0).pause();
        List<Long> errorMillis = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
          long start = System.nanoTime();
          assertThatThrownBy(() -> tq.kv().batchGet(keys, "pause", ClientProcess.FIELDS).close())
              .isInstanceOf(TqException.class)
              .extracting(e -> ((TqException) e).code())
              .isIn(ErrorCode.DEADLINE_EXCEEDED, ErrorCode.CONNECTION_FAILED);
          errorMillis.add((System.nanoTime() - start) / 1_000_000);
        }
        // The keys of the running unit stay readable meanwhile.
        String whilePaused = ClientProcess.readable(tq.kv(), "pause", unit1);
        assertThat(whilePaused).isEqualTo("readable " + unit1.size() + "/" + unit1.size() + " {}");
        System.out.println(
            "[faults] SIGSTOP storage unit 0 (deadline "
                + deadline.toMillis()
                + " ms): reads of its keys failed after "
                + errorMillis
                + " ms; unit 1 keys "
                + whilePaused
                + "; platform threads "
                + threadsBefore
                + " -> "
                + Thread.activeCount());
        assertThat(Thread.activeCount()).isLessThan(threadsBefore + 8);

        cluster.unit(0).resume();
        assertThat(ClientProcess.readable(tq.kv(), "pause", keys))
            .isEqualTo("readable " + KEYS + "/" + KEYS + " {}");
        assertThat(unit0).hasSize(KEYS / 2);
      }
    }
  }

  private static void write(TqClient tq, String partition, List<String> keys) {
    try (Batch rows = ClientProcess.rows(tq.allocator(), keys)) {
      tq.kv().batchPut(keys, partition, rows, null);
    }
  }

  private static List<RoleProcess> startWorkloads(
      ProcessCluster cluster, StorageBackend backend, String partition) {
    List<RoleProcess> workloads =
        IntStream.range(0, CLIENTS)
            .mapToObj(
                i ->
                    cluster.client(
                        "workload " + i,
                        ClientProcess.class,
                        "workload",
                        cluster.config(backend).toString(),
                        partition,
                        Integer.toString(KEYS)))
            .toList();
    workloads.forEach(w -> w.awaitLine("ready"));
    return workloads;
  }

  /** Waits for every workload's typed error; prints the figures; returns the readable counts. */
  private static List<Integer> awaitErrors(
      String killed, List<RoleProcess> workloads, long killedAt) {
    return awaitErrors(killed, workloads, killedAt, EnumSet.complementOf(FATAL));
  }

  private static final EnumSet<ErrorCode> FATAL =
      EnumSet.copyOf(
          java.util.Arrays.stream(ErrorCode.values())
              .filter(c -> c.category() == ErrorCode.Category.FATAL)
              .toList());

  private static List<Integer> awaitErrors(
      String killed, List<RoleProcess> workloads, long killedAt, Set<ErrorCode> expected) {
    long last = 0;
    List<Integer> readable = new ArrayList<>();
    for (RoleProcess workload : workloads) {
      assertThat(workload.awaitExit(120))
          .as("%s: %s %s", workload.name(), workload.stdout(), workload.stderr())
          .isZero();
      Matcher error = ERROR.matcher(workload.awaitLine("error "));
      assertThat(error.matches()).isTrue();
      assertThat(ErrorCode.valueOf(error.group(1))).as(workload.stdout()).isIn(expected);
      long after = Long.parseLong(error.group(2)) - killedAt;
      last = Math.max(last, after);
      String readableLine = workload.awaitLine("readable ");
      Matcher m = READABLE.matcher(readableLine);
      assertThat(m.matches()).isTrue();
      assertThat(m.group(3)).as("no key reads wrong").doesNotContain("CORRUPT");
      readable.add(Integer.parseInt(m.group(1)));
      System.out.println(
          "[faults] kill -9 "
              + killed
              + ": "
              + workload.name()
              + " got "
              + error.group(1)
              + " "
              + after
              + " ms after the kill (failing call "
              + error.group(3)
              + " ms); "
              + readableLine);
    }
    System.out.println(
        "[faults] kill -9 "
            + killed
            + ": all "
            + workloads.size()
            + " clients had their error within "
            + last
            + " ms of the kill");
    return readable;
  }
}
