package org.transferqueue.objectstore.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.testing.Seeds;

/**
 * A store node with a journal, abandoned (as by a kill) after a random workload and recovered on
 * the same directory, holds exactly the readable objects the live store held, with their bytes and
 * hard pins; removed keys stay removed.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(120)
class NodeJournalTest {
  private static final ReplicateConfig HARD = ReplicateConfig.builder().withHardPin(true).build();

  @TempDir Path dir;

  private JournalSettings settings(long maxBytes) {
    return JournalSettings.builder(dir).segmentBytes(32 << 10).maxBytes(maxBytes).build();
  }

  private static EmbeddedObjectStore newStore(BufferAllocator allocator) {
    EmbeddedObjectStore store = EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT);
    assertThat(
            store.setup(
                StoreConfig.builder()
                    .globalSegmentSize(4 << 20)
                    .localBufferSize(1 << 20)
                    .localHostname("node-test")
                    .build()))
        .isZero();
    return store;
  }

  /** Readable objects: key -> hard pin and bytes. */
  static Map<String, String> dump(EmbeddedObjectStore store) {
    Map<String, String> out = new TreeMap<>();
    List<StoreMaster.PinnedObject> pinned = store.master().pinAllReadable();
    try {
      for (StoreMaster.PinnedObject object : pinned) {
        out.put(
            object.key(),
            (object.hardPinned() ? "hard " : "")
                + Arrays.toString(
                    object.ticket().allocation().memory.toArray(ValueLayout.JAVA_BYTE)));
      }
    } finally {
      store
          .master()
          .releaseReads(
              pinned.stream()
                  .map(StoreMaster.PinnedObject::ticket)
                  .toArray(StoreMaster.ReadTicket[]::new));
    }
    return out;
  }

  private static void workload(EmbeddedObjectStore store, SplittableRandom random, int steps) {
    for (int i = 0; i < steps; i++) {
      int op = random.nextInt(100);
      if (op < 60) {
        int n = random.nextInt(1, 5);
        List<String> keys = new ArrayList<>();
        long[] sizes = new long[n];
        for (int j = 0; j < n; j++) {
          String key = "k" + random.nextInt(50);
          while (keys.contains(key)) {
            key = key + "x";
          }
          keys.add(key);
          sizes[j] = random.nextInt(1, 3000);
        }
        boolean upsert = random.nextInt(4) != 0;
        try (PendingWrites writes = store.startWrites(keys, sizes, HARD, upsert)) {
          boolean[] received = new boolean[n];
          for (int j = 0; j < n; j++) {
            if (writes.destination(j) != null) {
              byte[] bytes = new byte[(int) sizes[j]];
              random.nextBytes(bytes);
              writes.destination(j).copyFrom(java.lang.foreign.MemorySegment.ofArray(bytes));
              received[j] = random.nextInt(10) != 0; // now and then a transfer fails
            }
          }
          writes.commit(received);
        }
      } else if (op < 90) {
        store.batchRemove(List.of("k" + random.nextInt(50), "k" + random.nextInt(50)), true);
      } else if (op < 93) {
        store.removeByRegex("^k1", true);
      } else {
        store.batchRemove(List.of("k" + random.nextInt(50)), false);
      }
    }
  }

  @Test
  void shouldRecoverExactlyTheReadableObjectsAfterAnAbandonedJournal(BufferAllocator allocator) {
    long seed = Seeds.seed();
    for (long maxBytes : new long[] {64L << 20, 256L << 10}) {
      deleteAll();
      Map<String, String> live;
      try (EmbeddedObjectStore store = newStore(allocator)) {
        NodeJournal journal =
            NodeJournal.open(store, settings(maxBytes), "store-node-0", Clock.SYSTEM);
        workload(store, new SplittableRandom(seed), 1500);
        live = dump(store);
        journal.abandon();
      }
      assertThat(live).isNotEmpty();
      try (EmbeddedObjectStore store = newStore(allocator);
          NodeJournal journal =
              NodeJournal.open(store, settings(maxBytes), "store-node-0", Clock.SYSTEM)) {
        assertThat(dump(store)).as("seed %d, max %d", seed, maxBytes).isEqualTo(live);
        if (maxBytes < (1 << 20)) {
          assertThat(journal.recoveredFromLsn()).as("compaction ran").isPositive();
        }
      }
      try (EmbeddedObjectStore store = newStore(allocator);
          NodeJournal journal =
              NodeJournal.open(store, settings(maxBytes), "store-node-0", Clock.SYSTEM)) {
        assertThat(journal.recovery().replayed()).isZero();
        assertThat(dump(store)).isEqualTo(live);
      }
    }
  }

  @Test
  void shouldRefuseToStartOnAMissingSegmentAndLeaveTheStoreEmpty(BufferAllocator allocator)
      throws IOException {
    try (EmbeddedObjectStore store = newStore(allocator)) {
      NodeJournal journal =
          NodeJournal.open(store, settings(64L << 20), "store-node-0", Clock.SYSTEM);
      workload(store, new SplittableRandom(Seeds.seed()), 600);
      journal.abandon();
    }
    List<Path> segments;
    try (Stream<Path> files = Files.list(dir)) {
      segments = files.filter(p -> p.toString().endsWith(".tqj")).sorted().toList();
    }
    assertThat(segments).hasSizeGreaterThan(2);
    Files.delete(segments.get(1));
    try (EmbeddedObjectStore store = newStore(allocator)) {
      assertThatThrownBy(
              () -> NodeJournal.open(store, settings(64L << 20), "store-node-0", Clock.SYSTEM))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
          .hasMessageContaining(segments.get(2).toString())
          .hasMessageContaining("missing");
      assertThat(store.statistics().objects()).isZero();
    }
  }

  private void deleteAll() {
    try (Stream<Path> files = Files.walk(dir)) {
      List<Path> all = new ArrayList<>(files.toList());
      all.sort((a, b) -> b.getNameCount() - a.getNameCount());
      for (Path p : all) {
        if (!p.equals(dir)) {
          Files.delete(p);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
