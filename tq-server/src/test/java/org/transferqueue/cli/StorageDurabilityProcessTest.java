package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.tensor.Batch;
import org.transferqueue.testing.Await;
import org.transferqueue.testing.Seeds;

/**
 * Crash durability of the storage roles as real processes: with {@code storage.durability:
 * journal}, a storage unit or a store node is killed with SIGKILL in the middle of a scripted
 * key-value workload and restarted on the same journal directory. Every write acknowledged before
 * the kill reads back byte-equal, every acknowledged removal stays removed, and the writes in
 * flight at the kill read back whole or not at all, never wrong. Damaged journals are refused at
 * start-up with a message naming the file and the offset. Each run prints a {@code [durability]}
 * line.
 */
class StorageDurabilityProcessTest {
  private static final String PARTITION = "durable";
  private static final int KEY_POOL = 48;

  /** What the workload knows of each key: acknowledged present, acknowledged absent, unknown. */
  private static final class Model {
    final Map<String, Boolean> acknowledged = new HashMap<>();
    final Set<String> uncertain = new HashSet<>();

    void put(List<String> keys) {
      keys.forEach(
          k -> {
            acknowledged.put(k, true);
            uncertain.remove(k);
          });
    }

    void removed(List<String> keys) {
      keys.forEach(
          k -> {
            acknowledged.put(k, false);
            uncertain.remove(k);
          });
    }

    void unknown(List<String> keys) {
      keys.forEach(
          k -> {
            acknowledged.remove(k);
            uncertain.add(k);
          });
    }
  }

  private static String yaml(Path journal, String sync) {
    return "storage:\n"
        + "  durability: journal\n"
        + "durability:\n"
        + "  journal_dir: \""
        + journal
        + "\"\n"
        + "  sync: "
        + sync
        + "\n"
        + "  segment_bytes: 65536\n"
        + "  max_bytes: 1048576\n";
  }

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void shouldRecoverEveryAcknowledgedWriteWhenAStorageUnitIsKilled(@TempDir Path dir) {
    killAndRecover(dir, StorageBackend.SIMPLE_STORAGE, Seeds.seed());
  }

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void shouldRecoverEveryAcknowledgedWriteWhenAStoreNodeIsKilled(@TempDir Path dir) {
    killAndRecover(dir, StorageBackend.MOONCAKE_STORE, Seeds.seed());
  }

  @Test
  @Tag("slow")
  @Timeout(value = 3600, unit = TimeUnit.SECONDS)
  void shouldRecoverEveryAcknowledgedWriteOverManySeeds(@TempDir Path dir) {
    SplittableRandom seeds = new SplittableRandom(Seeds.seed());
    for (int run = 0; run < 6; run++) {
      for (StorageBackend backend :
          List.of(StorageBackend.SIMPLE_STORAGE, StorageBackend.MOONCAKE_STORE)) {
        killAndRecover(dir.resolve(backend.configName() + "-" + run), backend, seeds.nextLong());
      }
    }
  }

  private static void killAndRecover(Path dir, StorageBackend backend, long seed) {
    boolean simple = backend == StorageBackend.SIMPLE_STORAGE;
    SplittableRandom random = new SplittableRandom(seed);
    String sync = random.nextBoolean() ? "fsync" : "interval";
    Model model = new Model();
    int killAfter = random.nextInt(10, 60);
    AtomicInteger done = new AtomicInteger();
    try (ProcessCluster cluster =
            new ProcessCluster(
                dir, simple ? 2 : 0, simple ? 0 : 2, yaml(dir.resolve("journal"), sync));
        TqClient client = TqClient.connect(cluster.tqConfig(backend))) {
      RoleProcess victim = simple ? cluster.unit(0) : cluster.node(0);
      Thread killer =
          Thread.ofPlatform()
              .start(
                  () -> {
                    Await.until(() -> done.get() >= killAfter, "the workload to reach the kill");
                    victim.kill();
                  });
      int failures = 0;
      int ops = 0;
      while (failures < 3 && ops < killAfter + 200) {
        List<String> keys = pick(random);
        boolean put = random.nextInt(100) < 70;
        try {
          if (put) {
            try (Batch rows = ClientProcess.rows(client.allocator(), keys)) {
              client.kv().batchPut(keys, PARTITION, rows, null);
            }
            model.put(keys);
          } else {
            List<String> present =
                keys.stream().filter(k -> Boolean.TRUE.equals(model.acknowledged.get(k))).toList();
            if (!present.isEmpty()) {
              client.kv().clear(present, PARTITION);
              model.removed(present);
            }
          }
        } catch (TqException e) {
          model.unknown(keys);
          if (!victim.isAlive()) {
            failures++;
          }
        }
        ops++;
        done.incrementAndGet();
      }
      join(killer);
      if (simple) {
        cluster.restartUnit(0);
      } else {
        cluster.restartNode(0);
      }
      verify(client, model, seed, backend);
      System.out.println(
          "[durability] "
              + backend.configName()
              + " seed "
              + seed
              + " sync "
              + sync
              + ": killed after "
              + killAfter
              + " operations, "
              + model.acknowledged.values().stream().filter(b -> b).count()
              + " acknowledged keys read back byte-equal, "
              + model.acknowledged.values().stream().filter(b -> !b).count()
              + " removed keys stayed removed, "
              + model.uncertain.size()
              + " keys in flight at the kill");
    }
  }

  private static List<String> pick(SplittableRandom random) {
    int n = random.nextInt(1, 5);
    List<String> keys = new ArrayList<>();
    while (keys.size() < n) {
      String key = "k" + random.nextInt(KEY_POOL);
      if (!keys.contains(key)) {
        keys.add(key);
      }
    }
    return keys;
  }

  private static void verify(TqClient client, Model model, long seed, StorageBackend backend) {
    Set<String> listed = client.kv().list(PARTITION).getOrDefault(PARTITION, Map.of()).keySet();
    for (Map.Entry<String, Boolean> entry : model.acknowledged.entrySet()) {
      String key = entry.getKey();
      if (entry.getValue()) {
        assertThat(listed).as("seed %d %s: acknowledged key %s", seed, backend, key).contains(key);
        try (Batch data = client.kv().batchGet(List.of(key), PARTITION, ClientProcess.FIELDS)) {
          assertThat(ClientProcess.difference(data, 0, key))
              .as("seed %d %s: key %s", seed, backend, key)
              .isNull();
        }
      } else {
        assertThat(listed).as("seed %d %s: removed key %s", seed, backend, key).doesNotContain(key);
      }
    }
    for (String key : model.uncertain) {
      if (!listed.contains(key)) {
        continue;
      }
      try (Batch data = client.kv().batchGet(List.of(key), PARTITION, ClientProcess.FIELDS)) {
        assertThat(ClientProcess.difference(data, 0, key))
            .as("seed %d %s: in-flight key %s read back wrong", seed, backend, key)
            .isNull();
      } catch (TqException e) {
        // A write in flight at the kill may be incomplete: a typed error, never wrong data.
      }
    }
  }

  private static void join(Thread thread) {
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  // ---------------------------------------------------------------- damaged journals

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void shouldRefuseToStartAStorageUnitOnADamagedJournalNamingFileAndOffset(@TempDir Path dir)
      throws IOException {
    Path journal = dir.resolve("journal");
    try (ProcessCluster cluster = new ProcessCluster(dir, 2, 0, yaml(journal, "fsync"));
        TqClient client = TqClient.connect(cluster.tqConfig(StorageBackend.SIMPLE_STORAGE))) {
      List<String> keys = ClientProcess.keys("k", 64);
      for (int i = 0; i < keys.size(); i += 4) {
        try (Batch rows = ClientProcess.rows(client.allocator(), keys.subList(i, i + 4))) {
          client.kv().batchPut(keys.subList(i, i + 4), PARTITION, rows, null);
        }
      }
      cluster.unit(0).kill();
      Path unitDir = journal.resolve("storage-unit-0");
      List<Path> segments = segments(unitDir);
      assertThat(segments).isNotEmpty();

      // A torn tail (the kill cut the last record): recovered with a warning, all keys intact.
      Path last = segments.getLast();
      Files.write(last, new byte[] {42, 0, 0, 0, 1, 2}, java.nio.file.StandardOpenOption.APPEND);
      cluster.restartUnit(0);
      try (Batch data = client.kv().batchGet(keys, PARTITION, ClientProcess.FIELDS)) {
        for (int r = 0; r < keys.size(); r++) {
          assertThat(ClientProcess.difference(data, r, keys.get(r))).isNull();
        }
      }
      assertThat(cluster.unit(0).stderr()).contains("torn last record").contains(last.toString());
      cluster.unit(0).kill();

      // A flipped byte inside a record: refused, naming the file and the offset.
      segments = segments(unitDir);
      Path first = segments.getFirst();
      byte[] bytes = Files.readAllBytes(first);
      bytes[bytes.length - 10] ^= 0x01;
      Files.write(first, bytes);
      RoleProcess refused =
          cluster.client(
              "storage-unit 0 on a damaged journal",
              TqCommand.class,
              "storage-unit",
              "--config",
              cluster.config(StorageBackend.SIMPLE_STORAGE).toString(),
              "--unit",
              "0");
      assertThat(refused.awaitExit(60)).isNotZero();
      assertThat(refused.stdout() + refused.stderr())
          .contains("CRC32C")
          .contains(first.toString())
          .contains("offset");
      System.out.println(
          "[durability] damaged journal refused: "
              + (refused
                  .stderr()
                  .lines()
                  .filter(l -> l.contains("offset"))
                  .findFirst()
                  .orElse("")));
    }
  }

  private static List<Path> segments(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".tqj")).sorted().toList();
    }
  }
}
