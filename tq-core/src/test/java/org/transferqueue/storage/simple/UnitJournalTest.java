package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.SyncPolicy;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.testing.Seeds;

/**
 * A storage unit with a journal, abandoned (as by a kill) after a random workload and recovered on
 * the same directory, holds exactly what the live unit held: every cell byte-equal, every
 * generation, nothing cleared or rolled back coming back.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(120)
class UnitJournalTest {
  private static final int SAMPLES = 40;

  @TempDir Path dir;

  private JournalSettings settings(long maxBytes) {
    return JournalSettings.builder(dir)
        .sync(SyncPolicy.INTERVAL)
        .segmentBytes(16 << 10)
        .maxBytes(maxBytes)
        .build();
  }

  private static StorageUnit newUnit(BufferAllocator allocator) {
    return new StorageUnit("TQ_STORAGE_UNIT_journal", OptionalLong.empty(), allocator, 1L << 30);
  }

  /** A random workload against one unit: puts kept or held, rollbacks, clears, checkpoints. */
  private static final class Workload {
    final StorageUnit unit;
    final SplittableRandom random;
    final long[] generation = new long[SAMPLES];
    final List<HeldPut> undecided = new ArrayList<>();

    Workload(StorageUnit unit, SplittableRandom random) {
      this.unit = unit;
      this.random = random;
    }

    void step(UnitJournal journal) {
      int op = random.nextInt(100);
      if (op < 55) {
        put();
      } else if (op < 70 && !undecided.isEmpty()) {
        HeldPut held = undecided.remove(random.nextInt(undecided.size()));
        if (random.nextBoolean()) {
          held.rollback();
        } else {
          held.close();
        }
      } else if (op < 90) {
        clear();
      } else if (op < 93 && journal != null) {
        journal.checkpoint();
      } else {
        put();
      }
    }

    void put() {
      int n = random.nextInt(1, 5);
      long[] gis = random.ints(0, SAMPLES).distinct().limit(n).asLongStream().toArray();
      long[] gens = new long[gis.length];
      for (int j = 0; j < gis.length; j++) {
        gens[j] = random.nextInt(4) == 0 ? -1 : generation[(int) gis[j]];
      }
      List<CellColumn> columns = new ArrayList<>();
      if (random.nextBoolean()) {
        int width = random.nextInt(1, 9);
        List<long[]> shapes = new ArrayList<>();
        List<MemorySegment> rows = new ArrayList<>();
        for (int j = 0; j < gis.length; j++) {
          shapes.add(new long[] {width});
          rows.add(bytes(width * 4L));
        }
        columns.add(CellColumn.tensors("dense", ColumnKind.DENSE, DType.FLOAT32, shapes, rows));
      }
      if (random.nextBoolean()) {
        List<long[]> shapes = new ArrayList<>();
        List<MemorySegment> rows = new ArrayList<>();
        for (int j = 0; j < gis.length; j++) {
          int len = random.nextInt(0, 50);
          shapes.add(new long[] {len});
          rows.add(bytes(len));
        }
        columns.add(CellColumn.tensors("jagged", ColumnKind.JAGGED, DType.UINT8, shapes, rows));
      }
      if (columns.isEmpty() || random.nextBoolean()) {
        List<Object> values = new ArrayList<>();
        for (int j = 0; j < gis.length; j++) {
          values.add(
              switch (random.nextInt(3)) {
                case 0 -> "s" + random.nextInt();
                case 1 -> Map.of("k", (long) random.nextInt(), "b", new byte[] {1, 2, 3});
                default -> null;
              });
        }
        columns.add(CellColumn.objects("obj", values));
      }
      HeldPut held = unit.putCells(gis, gens, columns);
      if (random.nextInt(3) == 0 && undecided.size() < 4) {
        undecided.add(held);
      } else {
        held.close();
      }
    }

    void clear() {
      int n = random.nextInt(1, 4);
      long[] gis = random.ints(0, SAMPLES).distinct().limit(n).asLongStream().toArray();
      long[] gens = new long[gis.length];
      for (int j = 0; j < gis.length; j++) {
        gens[j] = generation[(int) gis[j]];
      }
      unit.clear(gis, gens);
      for (long gi : gis) {
        generation[(int) gi]++;
      }
    }

    MemorySegment bytes(long n) {
      byte[] b = new byte[(int) n];
      random.nextBytes(b);
      return MemorySegment.ofArray(b);
    }
  }

  /** Everything a unit holds, comparable: field -> gi -> description of the cell. */
  static Map<String, Map<Long, String>> dump(StorageUnit unit) {
    Map<String, Map<Long, String>> out = new TreeMap<>();
    try (UnitCheckpoint.Contents contents = unit.checkpointContents()) {
      Map<Long, String> generations = new TreeMap<>();
      contents.generations().forEach((gi, gen) -> generations.put(gi, "generation " + gen));
      out.put("<samples>", generations);
      for (UnitCheckpoint.FieldCellsData field : contents.fields()) {
        Map<Long, String> cells = new TreeMap<>();
        for (UnitCheckpoint.CellRef ref : field.cells()) {
          CellBlock block = ref.block();
          String cell =
              block.kind() == CellBlock.Kind.OBJECT
                  ? "object " + describe(ObjectCells.plain(block.value(ref.row())))
                  : block.kind()
                      + " "
                      + block.dtype()
                      + " "
                      + Arrays.toString(block.rowShape(ref.row()))
                      + " "
                      + Arrays.toString(block.rowSegment(ref.row()).toArray(ValueLayout.JAVA_BYTE));
          cells.put(ref.gi(), cell);
        }
        if (!cells.isEmpty()) {
          out.put(field.field(), cells);
        }
      }
    }
    return out;
  }

  private static String describe(Object value) {
    return switch (value) {
      case byte[] b -> Arrays.toString(b);
      case Map<?, ?> m -> {
        Map<String, String> sorted = new TreeMap<>();
        m.forEach((k, v) -> sorted.put(String.valueOf(k), describe(v)));
        yield sorted.toString();
      }
      case null -> "null";
      default -> value.toString();
    };
  }

  @Test
  void shouldRecoverExactlyWhatTheLiveUnitHeldAfterAnAbandonedJournal(BufferAllocator allocator) {
    long seed = Seeds.seed();
    for (long maxBytes : new long[] {64L << 20, 96L << 10}) {
      deleteAll();
      SplittableRandom random = new SplittableRandom(seed);
      Map<String, Map<Long, String>> live;
      try (StorageUnit unit = newUnit(allocator)) {
        UnitJournal journal =
            UnitJournal.open(unit, settings(maxBytes), "storage-unit-0", Clock.SYSTEM);
        Workload workload = new Workload(unit, random);
        for (int i = 0; i < 1500; i++) {
          workload.step(journal);
        }
        live = dump(unit);
        journal.abandon(); // killed: no final checkpoint; undecided held puts stay as they are
        workload.undecided.forEach(HeldPut::close);
      }
      assertThat(live.get("<samples>")).isNotEmpty();
      try (StorageUnit unit = newUnit(allocator);
          UnitJournal journal =
              UnitJournal.open(unit, settings(maxBytes), "storage-unit-0", Clock.SYSTEM)) {
        assertThat(dump(unit)).as("seed %d, max %d", seed, maxBytes).isEqualTo(live);
        if (maxBytes < (1 << 20)) {
          assertThat(journal.recoveredFromLsn()).as("compaction ran").isPositive();
        }
      }
      // A clean close wrote a checkpoint: the next start replays nothing and holds the same.
      try (StorageUnit unit = newUnit(allocator);
          UnitJournal journal =
              UnitJournal.open(unit, settings(maxBytes), "storage-unit-0", Clock.SYSTEM)) {
        assertThat(journal.recovery().replayed()).isZero();
        assertThat(dump(unit)).isEqualTo(live);
      }
    }
  }

  @Test
  void shouldKeepWritingWhileCheckpointsAreTakenAndRecoverTheLastState(BufferAllocator allocator)
      throws Exception {
    SplittableRandom random = new SplittableRandom(Seeds.seed());
    Map<String, Map<Long, String>> live;
    try (StorageUnit unit = newUnit(allocator)) {
      UnitJournal journal =
          UnitJournal.open(unit, settings(64L << 20), "storage-unit-0", Clock.SYSTEM);
      AtomicBoolean stop = new AtomicBoolean();
      List<Long> checkpoints = new ArrayList<>();
      Thread compactor =
          Thread.ofPlatform()
              .start(
                  () -> {
                    while (!stop.get()) {
                      checkpoints.add(journal.checkpoint());
                    }
                  });
      Workload workload = new Workload(unit, random);
      try {
        for (int i = 0; i < 1500; i++) {
          workload.step(null);
        }
      } finally {
        stop.set(true);
        compactor.join();
      }
      assertThat(checkpoints).isNotEmpty().isSorted();
      live = dump(unit);
      journal.abandon();
      workload.undecided.forEach(HeldPut::close);
    }
    try (StorageUnit unit = newUnit(allocator);
        UnitJournal journal =
            UnitJournal.open(unit, settings(64L << 20), "storage-unit-0", Clock.SYSTEM)) {
      assertThat(journal.recoveredFromLsn()).isPositive();
      assertThat(dump(unit)).isEqualTo(live);
    }
  }

  @Test
  void shouldRefuseToStartOnADamagedJournalNamingFileAndOffset(BufferAllocator allocator)
      throws IOException {
    SplittableRandom random = new SplittableRandom(Seeds.seed());
    try (StorageUnit unit = newUnit(allocator)) {
      UnitJournal journal =
          UnitJournal.open(unit, settings(64L << 20), "storage-unit-0", Clock.SYSTEM);
      Workload workload = new Workload(unit, random);
      for (int i = 0; i < 300; i++) {
        workload.put();
      }
      journal.abandon();
      workload.undecided.forEach(HeldPut::close);
    }
    List<Path> segments;
    try (Stream<Path> files = Files.list(dir)) {
      segments = files.filter(p -> p.toString().endsWith(".tqj")).sorted().toList();
    }
    assertThat(segments).hasSizeGreaterThan(1);
    byte[] first = Files.readAllBytes(segments.getFirst());
    first[first.length / 2] ^= 0x10;
    Files.write(segments.getFirst(), first);
    try (StorageUnit unit = newUnit(allocator)) {
      assertThatThrownBy(
              () -> UnitJournal.open(unit, settings(64L << 20), "storage-unit-0", Clock.SYSTEM))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
          .hasMessageContaining(segments.getFirst().toString())
          .hasMessageContaining("offset");
      assertThat(unit.stats().samples()).as("nothing half-recovered is served").isZero();
    }
  }

  @Test
  void shouldRefuseAPutWhenTheJournalIsFullAndLeaveTheUnitUnchanged(BufferAllocator allocator) {
    JournalSettings tiny =
        JournalSettings.builder(dir).segmentBytes(4 << 10).maxBytes(8 << 10).build();
    try (StorageUnit unit = newUnit(allocator);
        UnitJournal journal = UnitJournal.open(unit, tiny, "storage-unit-0", Clock.SYSTEM)) {
      long[] gis = {1};
      List<CellColumn> big =
          List.of(
              CellColumn.tensors(
                  "f",
                  ColumnKind.DENSE,
                  DType.UINT8,
                  List.of(new long[] {20_000}),
                  List.of(MemorySegment.ofArray(new byte[20_000]))));
      assertThatThrownBy(() -> unit.putCells(gis, new long[] {-1}, big))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CAPACITY_EXCEEDED))
          .hasMessageContaining("journal full");
      assertThat(unit.stats().samples()).isZero();
      assertThat(journal.statistics().rejected()).isEqualTo(1);
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
