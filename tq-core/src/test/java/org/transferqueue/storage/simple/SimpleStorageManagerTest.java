package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.storage.simple.Cells.dense;
import static org.transferqueue.storage.simple.Cells.jagged;
import static org.transferqueue.storage.simple.Cells.objects;
import static org.transferqueue.storage.simple.Cells.row;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/** Scenarios 5.E (SimpleStorage manager), 5.B semantics without the network, and bad input. */
@ExtendWith(LeakCheckExtension.class)
class SimpleStorageManagerTest {

  private static SimpleStorageManager manager(
      BufferAllocator allocator, int units, OptionalLong total, ProductionNotifier notifier) {
    SimpleStorageSettings config =
        SimpleStorageSettings.builder().unitCount(units).totalStorageSize(total).build();
    return new SimpleStorageManager(config, allocator, notifier, new DataParserRegistry());
  }

  private static SimpleStorageManager manager(BufferAllocator allocator, RecordingNotifier n) {
    return manager(allocator, 2, OptionalLong.empty(), n);
  }

  private static BatchMeta meta(long... gis) {
    return BatchMeta.builder().globalIndexes(gis).partitionId("0").build();
  }

  private static BatchMeta meta(List<String> fields, long... gis) {
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionId("0");
    fields.forEach(f -> builder.field(f, FieldSchema.placeholder()));
    return builder.build();
  }

  private static void put(StorageManager manager, BatchMeta meta, Batch.Builder data) {
    try (Batch batch = data.build()) {
      manager.put(batch, meta);
    }
  }

  private static ErrorCode codeOf(Throwable e) {
    return ((TqException) e).code();
  }

  @Test
  void AS014_unitCapacityIsTheCeilingOfAnEvenSplit() {
    SimpleStorageSettings three =
        SimpleStorageSettings.builder()
            .unitCount(3)
            .totalStorageSize(OptionalLong.of(10_000))
            .build();
    SimpleStorageSettings four =
        SimpleStorageSettings.builder().unitCount(4).totalStorageSize(OptionalLong.of(10)).build();

    assertThat(three.unitCapacity()).hasValue(3334);
    assertThat(four.unitCapacity()).hasValue(3);
    assertThat(SimpleStorageSettings.builder().build().unitCapacity()).isEmpty();
  }

  @Test
  void shouldTakeSettingsFromTheTypedConfiguration() {
    org.transferqueue.config.TqConfig config =
        org.transferqueue.config.TqConfig.builder()
            .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(3).totalStorageSize(10L)))
            .memory(m -> m.storageUnitLimitBytes(1L << 20))
            .build();

    SimpleStorageSettings settings = ConfigMapper.simpleStorage(config);

    assertThat(settings.unitCount()).isEqualTo(3);
    assertThat(settings.unitCapacity()).hasValue(4);
    assertThat(settings.unitLimitBytes()).isEqualTo(1L << 20);
  }

  @Test
  void AS043_samplesAreRoutedByIndexModuloUnitCount(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, notifier)) {
      put(manager, meta(0, 1, 2, 3), Batch.builder().add("f", objects(0L, 1L, 2L, 3L)));

      StorageUnit unit0 = manager.units().get(0);
      StorageUnit unit1 = manager.units().get(1);
      assertThat(unit0.contains(0, List.of("f")) && unit0.contains(2, List.of("f"))).isTrue();
      assertThat(unit1.contains(1, List.of("f")) && unit1.contains(3, List.of("f"))).isTrue();
      assertThat(unit0.stats().samples()).isEqualTo(2);

      ClearResult cleared = manager.clear(meta(1, 2));
      assertThat(cleared.clearedSamples()).isEqualTo(2);
      assertThat(unit0.contains(2, List.of("f"))).isFalse();
      assertThat(unit1.contains(1, List.of("f"))).isFalse();
      assertThat(unit0.contains(0, List.of("f"))).isTrue();
    }
  }

  @Test
  void AS047_rowsSplitAcrossUnitsKeepTheirValues(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      put(
          manager,
          meta(4, 7, 10),
          Batch.builder()
              .add(
                  "x",
                  dense(allocator, new float[] {1, 2}, new float[] {3, 4}, new float[] {5, 6})));

      try (Batch read = manager.get(meta(List.of("x"), 10, 4), allocator)) {
        assertThat(row(read.column("x"), 0)).containsExactly(5, 6);
        assertThat(row(read.column("x"), 1)).containsExactly(1, 2);
      }
    }
  }

  @Test
  void AS052_columnKindsAreStable(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      Tensor scalars = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1, 2, 3}, 3);
      put(
          manager,
          meta(0, 1, 2),
          Batch.builder()
              .add(
                  "dense",
                  dense(allocator, new float[] {1, 2}, new float[] {3, 4}, new float[] {5, 6}))
              .add(
                  "uniform_jagged",
                  jagged(allocator, new float[] {1, 2}, new float[] {3, 4}, new float[] {5, 6}))
              .add("jagged", jagged(allocator, new float[] {1}, new float[] {2, 3}, new float[] {}))
              .add("objects", objects("hello", null, List.of(1L, "x")))
              .dense("scalars", scalars));

      List<String> fields = List.of("dense", "jagged", "objects", "scalars", "uniform_jagged");
      try (Batch read = manager.get(meta(fields, 0, 1, 2), allocator)) {
        assertThat(read.fields()).containsExactlyElementsOf(fields);
        assertThat(read.column("dense").kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(read.column("uniform_jagged").kind()).isEqualTo(ColumnKind.JAGGED);
        JaggedColumn ragged = (JaggedColumn) read.column("jagged");
        assertThat(ragged.rowShape(1)).containsExactly(2);
        assertThat(ragged.rowShape(2)).containsExactly(0);
        assertThat(row(ragged, 1)).containsExactly(2, 3);
        assertThat(((ObjectColumn) read.column("objects")).values())
            .containsExactly("hello", null, List.of(1L, "x"));
        DenseColumn scalarColumn = (DenseColumn) read.column("scalars");
        assertThat(scalarColumn.tensor().shape()).containsExactly(3);
        assertThat(scalarColumn.tensor().toFloatArray()).containsExactly(1, 2, 3);
      }
    }
  }

  @Test
  void AS052_denseRowsOfDifferentShapesComeBackJagged(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      put(
          manager,
          meta(0, 1),
          Batch.builder().add("x", dense(allocator, new float[] {1}, new float[] {2})));
      put(manager, meta(2), Batch.builder().add("x", dense(allocator, new float[] {3, 4, 5})));

      try (Batch read = manager.get(meta(List.of("x"), 2, 0), allocator)) {
        JaggedColumn x = (JaggedColumn) read.column("x");
        assertThat(row(x, 0)).containsExactly(3, 4, 5);
        assertThat(row(x, 1)).containsExactly(1);
      }
    }
  }

  @Test
  void AS052_tensorAndObjectCellsOfOneFieldAreAConflict(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      put(manager, meta(0), Batch.builder().add("x", dense(allocator, new float[] {1})));
      put(manager, meta(1), Batch.builder().add("x", objects("text")));

      assertThatThrownBy(() -> manager.get(meta(List.of("x"), 0, 1), allocator))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SCHEMA_CONFLICT))
          .hasMessageContaining("field 'x'");
      try (Batch one = manager.get(meta(List.of("x"), 1), allocator)) {
        assertThat(((ObjectColumn) one.column("x")).values()).containsExactly("text");
      }
    }
  }

  @Test
  void AS053_putNotifiesOnceWithTheDataSchema(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, notifier)) {
      PutResult result;
      try (Batch batch =
          Batch.builder()
              .add("test_field", dense(allocator, new float[] {1, 2}, new float[] {3, 4}))
              .build()) {
        result = manager.put(batch, meta(0, 1));
      }

      assertThat(notifier.accepted()).hasSize(1);
      var update = notifier.accepted().getFirst();
      assertThat(update.partitionId()).isEqualTo("0");
      assertThat(update.indexes()).containsExactly(0L, 1L);
      assertThat(update.fields())
          .containsExactly(Map.entry("test_field", FieldSchema.regular(DType.FLOAT32, 2)));
      assertThat(update.backendMeta()).isEmpty();
      assertThat(result.fieldSchema()).isEqualTo(update.fields());
      assertThat(result.applyTo(meta(0, 1)).isReady()).isTrue();
    }
  }

  @Test
  void AS054_failedPutWritesNothingAndDoesNotNotify(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, 2, OptionalLong.of(4), notifier)) {
      put(manager, meta(0, 2), Batch.builder().add("f", objects("a", "b")));
      notifier.accepted().clear();

      assertThatThrownBy(
              () -> put(manager, meta(1, 4, 6), Batch.builder().add("f", objects("c", "d", "e"))))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.CAPACITY_EXCEEDED))
          .hasMessageContaining("Storage capacity exceeded: 2 existing + 2 new > 2");

      assertThat(notifier.offered()).hasSize(1);
      assertThat(manager.units().get(1).contains(1, List.of("f"))).isFalse();
      assertThat(manager.units().get(0).stats().samples()).isEqualTo(2);
      try (Batch read = manager.get(meta(List.of("f"), 0, 2), allocator)) {
        assertThat(((ObjectColumn) read.column("f")).values()).containsExactly("a", "b");
      }
    }
  }

  @Test
  void AS055_getFailurePropagates(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      put(manager, meta(0), Batch.builder().add("f", objects("a")));

      assertThatThrownBy(() -> manager.get(meta(List.of("f"), 0, 2), allocator))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND))
          .hasMessageContaining("key 2 not found in field 'f'");
      assertThatThrownBy(() -> manager.get(meta(List.of("g"), 0), allocator))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.UNKNOWN_FIELD));
    }
  }

  @Test
  void AS056_clearFailureIsReportedNotThrown(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      put(manager, meta(0, 1, 2), Batch.builder().add("f", objects("a", "b", "c")));
      StorageUnit broken = manager.units().get(1);
      broken.close();

      ClearResult result = manager.clear(meta(0, 1, 2));

      assertThat(result.isComplete()).isFalse();
      assertThat(result.clearedSamples()).isEqualTo(2);
      assertThat(result.failures())
          .singleElement()
          .satisfies(
              f -> {
                assertThat(f.target()).isEqualTo(broken.id());
                assertThat(f.globalIndexes()).containsExactly(1L);
                assertThat(f.message()).contains("closed");
              });
      assertThat(result.failedGlobalIndexes()).containsExactly(1L);
    }
  }

  @Test
  void AS057_getReassemblesBatchOrder(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      put(
          manager,
          meta(0, 1, 2, 3),
          Batch.builder()
              .add(
                  "f",
                  dense(
                      allocator,
                      new float[] {0},
                      new float[] {1},
                      new float[] {2},
                      new float[] {3})));

      try (Batch read = manager.get(meta(List.of("f"), 3, 0, 1, 2), allocator)) {
        DenseColumn f = (DenseColumn) read.column("f");
        assertThat(f.tensor().toFloatArray()).containsExactly(3, 0, 1, 2);
      }
    }
  }

  @Test
  void AS058_emptyMetadataTouchesNothing(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, notifier);
        Batch empty = Batch.builder().rowCount(0).build()) {
      BatchMeta none = BatchMeta.empty();

      manager.put(empty, none);
      try (Batch read = manager.get(none, allocator)) {
        assertThat(read.rowCount()).isZero();
      }
      assertThat(manager.clear(none).clearedSamples()).isZero();

      assertThat(notifier.offered()).isEmpty();
      assertThat(allocator.allocatedBytes()).isZero();
    }
  }

  @Test
  void AS059_configurationIsValidated(BufferAllocator allocator) {
    assertThatThrownBy(() -> SimpleStorageSettings.builder().unitCount(0).build())
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_CONFIGURATION))
        .hasMessageContaining("backend.SimpleStorage.num_data_storage_units=0");

    StorageManagerRegistry registry =
        StorageManagerRegistry.builder()
            .register(
                StorageManagerRegistry.SIMPLE_STORAGE,
                SimpleStorageManager.factory(
                    SimpleStorageSettings.builder()
                        .unitCount(3)
                        .totalStorageSize(OptionalLong.of(10))
                        .build()))
            .build();
    StorageContext context = new StorageContext(allocator, ProductionNotifier.NO_OP);
    try (StorageManager manager = registry.create("SimpleStorage", context)) {
      assertThat(manager.backendName()).isEqualTo("SimpleStorage");
      SimpleStorageManager simple = (SimpleStorageManager) manager;
      assertThat(simple.units()).hasSize(3);
      assertThat(simple.unitStats().getFirst().capacitySamples()).hasValue(4);
      assertThat(simple.id()).matches("TQ_STORAGE_[0-9a-f]{8}");
    }
  }

  @Test
  void AS062_batchSizeMustMatchMetadata(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, notifier);
        Batch three = Batch.builder().add("f", objects(1L, 2L, 3L)).build()) {
      assertThatThrownBy(() -> manager.put(three, meta(0, 1)))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SHAPE_MISMATCH))
          .hasMessageContaining("Batch size of data (3) does not match expected (2)");

      assertThat(notifier.offered()).isEmpty();
      assertThat(manager.unitStats()).allSatisfy(s -> assertThat(s.samples()).isZero());
    }
  }

  @Test
  void shouldRollBackAndFailWhenNotificationIsRejected(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, notifier)) {
      put(
          manager,
          meta(0, 1),
          Batch.builder().add("x", dense(allocator, new float[] {1}, new float[] {2})));
      notifier.rejectWhen(u -> true);

      assertThatThrownBy(
              () ->
                  put(
                      manager,
                      meta(1, 2),
                      Batch.builder().add("x", dense(allocator, new float[] {8}, new float[] {9}))))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.NOTIFICATION_FAILED);
                assertThat(e.getCause()).hasMessageContaining("rejected update of partition 0");
              });

      try (Batch read = manager.get(meta(List.of("x"), 0, 1), allocator)) {
        assertThat(((DenseColumn) read.column("x")).tensor().toFloatArray()).containsExactly(1, 2);
      }
      assertThat(manager.units().get(0).contains(2, List.of("x"))).isFalse();
      assertThat(manager.unitStats().stream().mapToLong(StorageUnitStats::samples).sum())
          .isEqualTo(2);
    }
  }

  @Test
  void shouldNotifyEachPartitionAndKeepOnlyAcceptedOnesWhenLaterOneIsRejected(
      BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    notifier.rejectWhen(u -> u.partitionId().equals("b"));
    try (SimpleStorageManager manager = manager(allocator, notifier)) {
      BatchMeta mixed =
          BatchMeta.builder()
              .globalIndexes(10, 11, 12, 13)
              .partitionIds(List.of("a", "b", "a", "b"))
              .build();

      assertThatThrownBy(
              () -> put(manager, mixed, Batch.builder().add("f", objects("a0", "b0", "a1", "b1"))))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOTIFICATION_FAILED))
          .hasMessageContaining("partition 'b'")
          .hasMessageContaining("partitions accepted before it stay stored: [a]");

      assertThat(notifier.accepted())
          .singleElement()
          .satisfies(
              u -> {
                assertThat(u.partitionId()).isEqualTo("a");
                assertThat(u.indexes()).containsExactly(10L, 12L);
              });
      try (Batch read = manager.get(meta(List.of("f"), 10, 12), allocator)) {
        assertThat(((ObjectColumn) read.column("f")).values()).containsExactly("a0", "a1");
      }
      assertThat(manager.units().get(1).contains(11, List.of("f"))).isFalse();
      assertThat(manager.units().get(1).contains(13, List.of("f"))).isFalse();
    }
  }

  @Test
  void shouldRejectDtypeConflictingWithMetadataBeforeWriting(BufferAllocator allocator) {
    RecordingNotifier notifier = new RecordingNotifier();
    try (SimpleStorageManager manager = manager(allocator, notifier)) {
      BatchMeta recorded =
          BatchMeta.builder()
              .globalIndexes(0)
              .partitionId("0")
              .field("x", FieldSchema.regular(DType.INT64, 1))
              .build();

      assertThatThrownBy(
              () ->
                  put(
                      manager,
                      recorded,
                      Batch.builder().add("x", dense(allocator, new float[] {1}))))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SCHEMA_CONFLICT))
          .hasMessageContaining("field 'x' is recorded as int64")
          .hasMessageContaining("float32");
      assertThat(notifier.offered()).isEmpty();
      assertThat(manager.units().get(0).stats().cells()).isZero();
    }
  }

  @Test
  void shouldRejectDuplicateIndexesBeforeWriting(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      assertThatThrownBy(() -> put(manager, meta(3, 3), Batch.builder().add("f", objects(1L, 2L))))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DUPLICATE_KEY));
      assertThat(manager.unitStats()).allSatisfy(s -> assertThat(s.samples()).isZero());
    }
  }

  @Test
  void shouldReturnIndependentCopies(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      byte[] bytes = {1, 2, 3};
      try (Batch batch =
          Batch.builder()
              .add("x", dense(allocator, new float[] {1, 2}))
              .add("o", objects(bytes))
              .build()) {
        manager.put(batch, meta(0));
        ((DenseColumn) batch.column("x")).tensor().setFloat(0, 100);
        bytes[0] = 100;
      }

      try (Batch first = manager.get(meta(List.of("o", "x"), 0), allocator)) {
        assertThat(((DenseColumn) first.column("x")).tensor().toFloatArray()).containsExactly(1, 2);
        assertThat((byte[]) ((ObjectColumn) first.column("o")).get(0)).containsExactly(1, 2, 3);
        ((DenseColumn) first.column("x")).tensor().setFloat(1, -1);
        ((byte[]) ((ObjectColumn) first.column("o")).get(0))[1] = 99;
      }
      try (Batch second = manager.get(meta(List.of("o", "x"), 0), allocator)) {
        assertThat(((DenseColumn) second.column("x")).tensor().toFloatArray())
            .containsExactly(1, 2);
        assertThat((byte[]) ((ObjectColumn) second.column("o")).get(0)).containsExactly(1, 2, 3);
      }
    }
  }

  @Test
  void shouldStoreTensorsNestedInObjectValues(BufferAllocator allocator) {
    try (SimpleStorageManager manager = manager(allocator, new RecordingNotifier())) {
      Tensor nested = Tensor.ofLongs(allocator, DType.INT64, new long[] {7, 8}, 2);
      put(manager, meta(0), Batch.builder().objects("o", List.of(Map.of("t", nested, "k", "v"))));

      try (Batch read = manager.get(meta(List.of("o"), 0), allocator)) {
        Map<?, ?> value = (Map<?, ?>) ((ObjectColumn) read.column("o")).get(0);
        assertThat(value.get("k")).isEqualTo("v");
        assertThat(((Tensor) value.get("t")).toLongArray()).containsExactly(7, 8);
      }
    }
  }

  @Test
  void shouldFailRequestsAfterCloseAndFreeAllMemory(BufferAllocator allocator) {
    SimpleStorageManager manager = manager(allocator, new RecordingNotifier());
    put(
        manager,
        meta(0, 1),
        Batch.builder().add("x", dense(allocator, new float[] {1}, new float[] {2})));

    manager.close();
    manager.close();

    assertThat(allocator.allocatedBytes()).isZero();
    assertThatThrownBy(() -> manager.get(meta(List.of("x"), 0), allocator))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.CLOSED));
  }

  @Test
  void shouldReportUnitStatistics(BufferAllocator allocator) {
    try (SimpleStorageManager manager =
        manager(allocator, 2, OptionalLong.of(10), new RecordingNotifier())) {
      put(
          manager,
          meta(0, 1, 2),
          Batch.builder()
              .add("a", dense(allocator, new float[] {1}, new float[] {2}, new float[] {3}))
              .add("b", objects(1L, 2L, 3L)));

      List<StorageUnitStats> stats = manager.unitStats();
      assertThat(stats).extracting(StorageUnitStats::samples).containsExactly(2L, 1L);
      assertThat(stats).extracting(StorageUnitStats::cells).containsExactly(4L, 2L);
      assertThat(stats).extracting(StorageUnitStats::fields).containsExactly(2, 2);
      assertThat(stats).allSatisfy(s -> assertThat(s.capacitySamples()).hasValue(5));
      assertThat(stats.get(0).allocatedBytes()).isPositive();
      assertThat(Arrays.asList(stats.get(0).unitId(), stats.get(1).unitId()))
          .containsExactly(manager.units().get(0).id(), manager.units().get(1).id());
    }
  }
}
