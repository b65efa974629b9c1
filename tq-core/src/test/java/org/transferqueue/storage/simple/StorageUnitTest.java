package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.storage.simple.Cells.dense;
import static org.transferqueue.storage.simple.Cells.objects;
import static org.transferqueue.storage.simple.Cells.row;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/** Scenarios 5.A (storage unit data). */
@ExtendWith(LeakCheckExtension.class)
class StorageUnitTest {

  static StorageUnit unit(BufferAllocator allocator, long capacity) {
    return new StorageUnit(
        "TQ_STORAGE_UNIT_test",
        capacity < 0 ? OptionalLong.empty() : OptionalLong.of(capacity),
        allocator,
        Long.MAX_VALUE);
  }

  static void put(StorageUnit unit, long[] gis, Batch.Builder rows) {
    try (Batch batch = rows.build()) {
      unit.put(gis, UnknownGenerations.of(gis), batch);
    }
  }

  private static Batch.Builder batch() {
    return Batch.builder();
  }

  private static ErrorCode codeOf(Throwable e) {
    return ((TqException) e).code();
  }

  @Test
  void shouldKeepTheBackingBufferInsteadOfCopyingWhenRowsLieInItBackToBack(
      BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 10)) {
      NativeBuffer backing = unit.allocator().allocate(3 * 8);
      List<MemorySegment> rows = new ArrayList<>();
      for (int j = 0; j < 3; j++) {
        MemorySegment row = backing.segment().asSlice(j * 8L, 8);
        row.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, 100 + j);
        rows.add(row);
      }
      List<long[]> shapes = List.of(new long[] {1}, new long[] {1}, new long[] {1});
      long before = unit.allocator().allocatedBytes();
      try (backing) {
        unit.putCells(
                new long[] {0, 1, 2},
                UnknownGenerations.of(new long[] {0, 1, 2}),
                List.of(
                    CellColumn.tensors("f", ColumnKind.DENSE, DType.INT64, shapes, rows, backing)))
            .close();
        assertThat(backing.refCount()).as("the unit holds its own reference").isEqualTo(2);
        assertThat(unit.allocator().allocatedBytes()).as("no second block").isEqualTo(before);
      }
      try (UnitCells cells =
          unit.readCells(
              new long[] {2, 0}, UnknownGenerations.of(new long[] {2, 0}), List.of("f"))) {
        assertThat(cells.bytes(0, 0).get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(102);
        assertThat(cells.bytes(0, 1).get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(100);
      }
    }
  }

  @Test
  void shouldCopyWhenTheBackingBufferIsNotTheUnits(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 10);
        NativeBuffer foreign = allocator.allocate(2 * 8)) {
      List<MemorySegment> rows =
          List.of(foreign.segment().asSlice(0, 8), foreign.segment().asSlice(8, 8));
      rows.get(0).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, 7);
      rows.get(1).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, 9);
      List<long[]> shapes = List.of(new long[] {1}, new long[] {1});
      unit.putCells(
              new long[] {0, 1},
              UnknownGenerations.of(new long[] {0, 1}),
              List.of(
                  CellColumn.tensors("f", ColumnKind.DENSE, DType.INT64, shapes, rows, foreign)))
          .close();
      assertThat(foreign.refCount()).isEqualTo(1);
      rows.get(0).set(ValueLayout.JAVA_LONG_UNALIGNED, 0, -1);
      try (UnitCells cells =
          unit.readCells(
              new long[] {0, 1}, UnknownGenerations.of(new long[] {0, 1}), List.of("f"))) {
        assertThat(cells.bytes(0, 0).get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(7);
        assertThat(cells.bytes(0, 1).get(ValueLayout.JAVA_LONG_UNALIGNED, 0)).isEqualTo(9);
      }
    }
  }

  @Test
  void AS001_putThenGetReturnsEveryCell(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 10)) {
      put(
          unit,
          new long[] {0, 1},
          batch()
              .add("log_probs", dense(allocator, new float[] {1, 2}, new float[] {3, 4}))
              .add("rewards", dense(allocator, new float[] {10}, new float[] {20})));

      try (Batch both =
              unit.get(
                  new long[] {0, 1},
                  UnknownGenerations.of(new long[] {0, 1}),
                  List.of("log_probs", "rewards"),
                  allocator);
          Batch first =
              unit.get(
                  new long[] {0},
                  UnknownGenerations.of(new long[] {0}),
                  List.of("log_probs"),
                  allocator)) {
        assertThat(both.rowCount()).isEqualTo(2);
        assertThat(row(both.column("rewards"), 1)).containsExactly(20f);
        assertThat(row(first.column("log_probs"), 0)).containsExactly(1f, 2f);
      }
    }
  }

  private static void putGeneration(
      StorageUnit unit, long gi, long generation, Batch.Builder rows) {
    try (Batch batch = rows.build()) {
      unit.put(new long[] {gi}, new long[] {generation}, batch);
    }
  }

  private static ErrorCode codeOfCall(Runnable call) {
    try {
      call.run();
      return null;
    } catch (TqException e) {
      return e.code();
    }
  }

  @Test
  void shouldRefuseReadsAndWritesOfAnOlderGenerationThanTheOneHeld(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 10)) {
      putGeneration(unit, 5, 3, batch().add("x", dense(allocator, new float[] {1})));
      assertThat(
              codeOfCall(
                  () ->
                      putGeneration(
                          unit, 5, 2, batch().add("x", dense(allocator, new float[] {9})))))
          .isEqualTo(ErrorCode.STALE_METADATA);
      assertThat(
              codeOfCall(
                  () -> unit.get(new long[] {5}, new long[] {2}, List.of("x"), allocator).close()))
          .isEqualTo(ErrorCode.STALE_METADATA);
      assertThat(
              codeOfCall(
                  () -> unit.get(new long[] {5}, new long[] {4}, List.of("x"), allocator).close()))
          .as("a newer sample than the one held has no cell here")
          .isEqualTo(ErrorCode.NOT_FOUND);
      try (Batch read = unit.get(new long[] {5}, new long[] {3}, List.of("x"), allocator)) {
        assertThat(row(read.column("x"), 0)).containsExactly(1f);
      }
      try (Batch read = unit.get(new long[] {5}, new long[] {-1}, List.of("x"), allocator)) {
        assertThat(row(read.column("x"), 0)).as("unknown matches").containsExactly(1f);
      }
    }
  }

  @Test
  void shouldReplaceEveryCellOfAnOlderGenerationWhenANewerOneIsPut(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 10)) {
      putGeneration(
          unit,
          7,
          0,
          batch()
              .add("x", dense(allocator, new float[] {1}))
              .add("y", dense(allocator, new float[] {2})));
      putGeneration(unit, 7, 1, batch().add("x", dense(allocator, new float[] {3})));
      assertThat(unit.contains(7, List.of("x"))).isTrue();
      assertThat(unit.contains(7, List.of("y"))).as("the old sample's cell").isFalse();
      assertThat(unit.stats().cells()).isEqualTo(1);
      assertThat(unit.stats().samples()).isEqualTo(1);
    }
  }

  @Test
  void shouldNotRemoveANewerGenerationThanTheClearNames(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 10)) {
      putGeneration(unit, 1, 4, batch().add("x", dense(allocator, new float[] {1})));
      assertThat(unit.clear(new long[] {1}, new long[] {3})).isZero();
      assertThat(unit.contains(1, List.of("x"))).isTrue();
      assertThat(unit.clear(new long[] {1}, new long[] {5})).isEqualTo(1);
      assertThat(unit.contains(1, List.of("x"))).isFalse();
    }
  }

  @Test
  void shouldTakeBackAPutThatReplacedAnOlderGenerationWithoutReviving(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 10)) {
      putGeneration(unit, 2, 0, batch().add("x", dense(allocator, new float[] {1})));
      try (Tensor t = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {5}, 1)) {
        HeldPut held =
            unit.putCells(
                new long[] {2},
                new long[] {1},
                List.of(
                    CellColumn.tensors(
                        "x",
                        ColumnKind.DENSE,
                        DType.FLOAT32,
                        List.of(new long[0]),
                        List.of(t.segment()),
                        null)));
        held.rollback();
      }
      assertThat(unit.contains(2, List.of("x"))).isFalse();
      assertThat(unit.stats().samples()).isZero();
    }
  }

  @Test
  void AS002_clearRemovesTheSample(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 10)) {
      put(
          unit,
          new long[] {0, 1},
          batch().add("log_probs", dense(allocator, new float[] {1, 2}, new float[] {3, 4})));

      assertThat(unit.clear(new long[] {0}, UnknownGenerations.of(new long[] {0}))).isEqualTo(1);

      assertThat(unit.contains(0, List.of("log_probs"))).isFalse();
      assertThat(unit.contains(1, List.of("log_probs"))).isTrue();
      assertThat(unit.stats().samples()).isEqualTo(1);
      assertThat(unit.stats().cells()).isEqualTo(1);
    }
  }

  @Test
  void AS003_capacityCountsDistinctSamples(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 3)) {
      put(unit, new long[] {0, 1, 2}, batch().add("f", objects(1L, 2L, 3L)));

      assertThatThrownBy(() -> put(unit, new long[] {3}, batch().add("f", objects(4L))))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.CAPACITY_EXCEEDED))
          .hasMessageContaining("Storage capacity exceeded: 3 existing + 1 new > 3");
      assertThat(unit.contains(3, List.of("f"))).isFalse();

      unit.clear(new long[] {2}, UnknownGenerations.of(new long[] {2}));
      put(unit, new long[] {3}, batch().add("f", objects(4L)));
      assertThat(unit.stats().samples()).isEqualTo(3);
      for (long gi : new long[] {0, 1, 3}) {
        assertThat(unit.contains(gi, List.of("f"))).as("gi %d", gi).isTrue();
      }
      assertThat(unit.contains(2, List.of("f"))).isFalse();
    }
  }

  @Test
  void AS004_capacityIsNotPerCell(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 2)) {
      put(unit, new long[] {0, 1}, batch().add("a", objects(1L, 2L)).add("b", objects(3L, 4L)));

      assertThat(unit.stats().samples()).isEqualTo(2);
      assertThat(unit.stats().cells()).isEqualTo(4);
    }
  }

  @Test
  void AS005_overwriteDoesNotConsumeCapacity(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, 2)) {
      put(unit, new long[] {0, 1}, batch().add("a", objects(1L, 2L)));

      put(unit, new long[] {1}, batch().add("a", objects(9L)));

      try (Batch read =
          unit.get(
              new long[] {1}, UnknownGenerations.of(new long[] {1}), List.of("a"), allocator)) {
        assertThat(((ObjectColumn) read.column("a")).values()).containsExactly(9L);
      }
    }
  }

  @Test
  void AS006_partialFieldUpdateKeepsOtherFields(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, -1)) {
      put(unit, new long[] {5}, batch().add("a", objects(1L)).add("b", objects(2L)));

      put(unit, new long[] {5}, batch().add("a", objects(7L)));

      try (Batch read =
          unit.get(
              new long[] {5},
              UnknownGenerations.of(new long[] {5}),
              List.of("a", "b"),
              allocator)) {
        assertThat(((ObjectColumn) read.column("a")).values()).containsExactly(7L);
        assertThat(((ObjectColumn) read.column("b")).values()).containsExactly(2L);
      }
    }
  }

  @Test
  void AS007_unknownFieldListsAvailableFields(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, -1)) {
      put(unit, new long[] {0}, batch().add("a", objects(1L)));

      assertThatThrownBy(
              () ->
                  unit.get(
                      new long[] {0},
                      UnknownGenerations.of(new long[] {0}),
                      List.of("zzz"),
                      allocator))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.UNKNOWN_FIELD))
          .hasMessageContaining("field 'zzz' not found")
          .hasMessageContaining("Available: [a]");
    }
  }

  @Test
  void AS008_missingKeyIsNamed(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, -1)) {
      put(unit, new long[] {1}, batch().add("a", objects(1L)));

      assertThatThrownBy(
              () ->
                  unit.get(
                      new long[] {9},
                      UnknownGenerations.of(new long[] {9}),
                      List.of("a"),
                      allocator))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND))
          .hasMessageContaining("key 9 not found in field 'a'");
    }
  }

  @Test
  void AS009_lengthMismatchWritesNothing(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, -1);
        Batch rows = batch().add("a", objects(1L, 2L)).build()) {
      assertThatThrownBy(
              () ->
                  unit.put(new long[] {0, 1, 2}, UnknownGenerations.of(new long[] {0, 1, 2}), rows))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SHAPE_MISMATCH))
          .hasMessageContaining("values length 2 != global_indexes length 3");

      assertThatThrownBy(
              () ->
                  unit.get(
                      new long[] {0},
                      UnknownGenerations.of(new long[] {0}),
                      List.of("a"),
                      allocator))
          .hasMessageContaining("field 'a' not found");
      assertThat(unit.stats().samples()).isZero();
    }
  }

  @Test
  void AS010_unlimitedCapacityTakesManySamples(BufferAllocator allocator) {
    int n = 100_000;
    long[] gis = new long[n];
    Object[] values = new Object[n];
    for (int i = 0; i < n; i++) {
      gis[i] = i;
      values[i] = (long) i;
    }
    try (StorageUnit unit = unit(allocator, -1)) {
      put(unit, gis, batch().add("v", objects(values)));

      assertThat(unit.stats().samples()).isEqualTo(n);
      assertThat(unit.stats().capacitySamples()).isEmpty();
    }
  }

  @Test
  void AS011_clearIsIdempotent(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, -1)) {
      put(unit, new long[] {0, 1}, batch().add("a", objects(1L, 2L)));

      unit.clear(new long[] {1, 42}, UnknownGenerations.of(new long[] {1, 42}));
      unit.clear(new long[] {1, 42}, UnknownGenerations.of(new long[] {1, 42}));

      assertThat(unit.stats().samples()).isEqualTo(1);
      assertThat(unit.contains(0, List.of("a"))).isTrue();
    }
  }

  @Test
  void AS012_getFollowsRequestOrder(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, -1)) {
      put(unit, new long[] {3, 1, 2}, batch().add("s", objects("c", "a", "b")));

      try (Batch read =
          unit.get(
              new long[] {1, 2, 3},
              UnknownGenerations.of(new long[] {1, 2, 3}),
              List.of("s"),
              allocator)) {
        assertThat(((ObjectColumn) read.column("s")).values()).containsExactly("a", "b", "c");
      }
    }
  }

  @Test
  void AS013_denseColumnIsStoredAsRowCells(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, -1)) {
      put(
          unit,
          new long[] {0, 1, 2},
          batch()
              .add(
                  "x",
                  dense(allocator, new float[] {1, 2}, new float[] {3, 4}, new float[] {5, 6})));

      assertThat(unit.stats().cells()).isEqualTo(3);
      try (Batch read =
          unit.get(
              new long[] {2, 0},
              UnknownGenerations.of(new long[] {2, 0}),
              List.of("x"),
              allocator)) {
        DenseColumn x = (DenseColumn) read.column("x");
        assertThat(x.kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(x.tensor().shape()).containsExactly(2, 2);
        assertThat(row(x, 0)).containsExactly(5f, 6f);
        assertThat(row(x, 1)).containsExactly(1f, 2f);
      }
    }
  }

  @Test
  void shouldRejectDuplicateIndexesInOnePut(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, -1);
        Batch rows = batch().add("a", objects(1L, 2L)).build()) {
      assertThatThrownBy(
              () -> unit.put(new long[] {4, 4}, UnknownGenerations.of(new long[] {4, 4}), rows))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DUPLICATE_KEY))
          .hasMessageContaining("global index 4");
      assertThat(unit.stats().samples()).isZero();
    }
  }

  @Test
  void shouldFreeEveryCellWhenClosedWhileHoldingData(BufferAllocator allocator) {
    StorageUnit unit = unit(allocator, -1);
    put(
        unit,
        new long[] {0, 1},
        batch().add("x", dense(allocator, new float[] {1}, new float[] {2})));
    assertThat(unit.stats().allocatedBytes()).isPositive();

    unit.close();
    unit.close();

    assertThat(allocator.allocatedBytes()).isZero();
    assertThatThrownBy(() -> unit.clear(new long[] {0}, UnknownGenerations.of(new long[] {0})))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.CLOSED));
  }

  @Test
  void shouldFreeBlocksOnlyWhenAllTheirRowsAreReplacedOrCleared(BufferAllocator allocator) {
    try (StorageUnit unit = unit(allocator, -1)) {
      put(
          unit,
          new long[] {0, 1},
          batch().add("x", dense(allocator, new float[] {1}, new float[] {2})));
      long firstBlock = unit.stats().allocatedBytes();

      put(unit, new long[] {0}, batch().add("x", dense(allocator, new float[] {3})));
      long secondBlock = unit.stats().allocatedBytes() - firstBlock;
      put(unit, new long[] {1}, batch().add("x", dense(allocator, new float[] {4})));

      assertThat(unit.stats().allocatedBytes())
          .as("the first block is freed once both its rows are replaced")
          .isEqualTo(2 * secondBlock);
      unit.clear(new long[] {0, 1}, UnknownGenerations.of(new long[] {0, 1}));
      assertThat(unit.stats().allocatedBytes()).isZero();
      assertThat(unit.stats().cells()).isZero();
    }
  }

  @Test
  void shouldKeepCellsOfATakenSnapshotAliveWhenTheyAreReplaced(BufferAllocator allocator) {
    float[] ones = new float[1024];
    Arrays.fill(ones, 1f);
    float[] twos = new float[1024];
    Arrays.fill(twos, 2f);
    try (StorageUnit unit = unit(allocator, -1)) {
      put(unit, new long[] {0}, batch().add("x", dense(allocator, ones)));
      try (CellSnapshot snapshot =
          unit.snapshot(new long[] {0}, UnknownGenerations.of(new long[] {0}), List.of("x"))) {
        put(unit, new long[] {0}, batch().add("x", dense(allocator, twos)));
        unit.clear(new long[] {0}, UnknownGenerations.of(new long[] {0}));
        // Had the replaced block been freed, the pool would hand it out again here.
        List<NativeBuffer> reused = new ArrayList<>();
        try (Tensor copy = Tensor.allocate(allocator, DType.FLOAT32, 1024)) {
          for (int i = 0; i < 16; i++) {
            NativeBuffer buffer = allocator.allocate(4096);
            reused.add(buffer);
            buffer.segment().fill((byte) 0x7f);
          }
          snapshot.block(0, 0).copyRowTo(snapshot.blockRow(0, 0), copy.segment(), 0);
          assertThat(copy.toFloatArray()).containsOnly(1f);
        } finally {
          reused.forEach(NativeBuffer::close);
        }
      }
      assertThat(unit.stats().allocatedBytes()).isZero();
    }
  }
}
