package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.storage.simple.Cells.dense;
import static org.transferqueue.storage.simple.Cells.denseLongs;
import static org.transferqueue.storage.simple.Cells.jagged;
import static org.transferqueue.storage.simple.Cells.longRow;
import static org.transferqueue.storage.simple.Cells.objects;
import static org.transferqueue.storage.simple.Cells.row;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Scenarios 5.B (storage-unit protocol semantics) and 5.J (value round trips), through the
 * in-process router and again through the remote router to storage-unit servers on loopback.
 */
@ParameterizedClass
@EnumSource(RouterUnderTest.Placement.class)
@ExtendWith(LeakCheckExtension.class)
class SimpleStorageRoundTripTest {
  @Parameter RouterUnderTest.Placement placement;

  private RouterUnderTest manager(BufferAllocator allocator, int units, long total) {
    return RouterUnderTest.start(placement, allocator, units, total);
  }

  private static BatchMeta meta(List<String> fields, long... gis) {
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionId("0");
    fields.forEach(f -> builder.field(f, FieldSchema.placeholder()));
    return builder.build();
  }

  private static long[] range(int n) {
    long[] gis = new long[n];
    for (int i = 0; i < n; i++) {
      gis[i] = i;
    }
    return gis;
  }

  private static void put(RouterUnderTest manager, long[] gis, Batch.Builder data) {
    try (Batch batch = data.build()) {
      manager.put(batch, meta(List.of(), gis));
    }
  }

  /** Puts {@code batch} under gis 0..B-1 and checks that a get returns equal columns. */
  private static void assertRoundTrip(
      RouterUnderTest manager, BufferAllocator allocator, Batch batch) {
    long[] gis = range(batch.rowCount());
    manager.put(batch, meta(List.of(), gis));
    List<String> fields = batch.fields().stream().sorted().toList();
    try (Batch read = manager.get(meta(fields, gis), allocator)) {
      assertThat(read.rowCount()).isEqualTo(batch.rowCount());
      for (String field : fields) {
        Column expected = batch.column(field);
        Column actual = read.column(field);
        assertThat(actual.kind()).as(field).isEqualTo(expected.kind());
        assertThat(actual.contentEquals(expected))
            .as("%s: %s vs %s", field, actual, expected)
            .isTrue();
      }
    }
  }

  @Test
  void AS015_putThenGetASubset(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 1, 10_000)) {
      put(
          manager,
          range(3),
          Batch.builder()
              .add(
                  "log_probs",
                  dense(
                      allocator,
                      new float[] {1, 2, 3},
                      new float[] {4, 5, 6},
                      new float[] {7, 8, 9}))
              .add(
                  "rewards",
                  dense(allocator, new float[] {10}, new float[] {20}, new float[] {30})));

      try (Batch read = manager.get(meta(List.of("log_probs", "rewards"), 0, 1), allocator)) {
        assertThat(row(read.column("log_probs"), 0)).containsExactly(1, 2, 3);
        assertThat(row(read.column("log_probs"), 1)).containsExactly(4, 5, 6);
        assertThat(row(read.column("rewards"), 0)).containsExactly(10);
        assertThat(row(read.column("rewards"), 1)).containsExactly(20);
      }
    }
  }

  @Test
  void AS016_concurrentClientsAndOverwrite(BufferAllocator allocator) throws Exception {
    ExecutorService clients = Executors.newFixedThreadPool(3);
    try (RouterUnderTest manager = manager(allocator, 2, -1)) {
      List<Future<?>> puts = new ArrayList<>();
      for (int c = 0; c < 3; c++) {
        long i = c;
        puts.add(
            clients.submit(
                () ->
                    put(
                        manager,
                        new long[] {10 * i, 10 * i + 1, 10 * i + 2},
                        Batch.builder()
                            .add(
                                "log_probs",
                                denseLongs(
                                    allocator,
                                    new long[] {i, i + 1, i + 2},
                                    new long[] {i + 3, i + 4, i + 5},
                                    new long[] {i + 6, i + 7, i + 8}))
                            .add(
                                "rewards",
                                denseLongs(
                                    allocator,
                                    new long[] {10 * i},
                                    new long[] {10 * i + 10},
                                    new long[] {10 * i + 20})))));
      }
      for (Future<?> f : puts) {
        f.get(30, TimeUnit.SECONDS);
      }
      put(
          manager,
          new long[] {0},
          Batch.builder()
              .add("log_probs", denseLongs(allocator, new long[] {999, 999, 999}))
              .add("rewards", denseLongs(allocator, new long[] {999})));

      List<String> fields = List.of("log_probs", "rewards");
      try (Batch c0 = manager.get(meta(fields, 0, 1), allocator);
          Batch c2 = manager.get(meta(fields, 20, 21), allocator)) {
        assertThat(longRow(c0.column("log_probs"), 0)).containsExactly(999, 999, 999);
        assertThat(longRow(c0.column("rewards"), 0)).containsExactly(999);
        assertThat(longRow(c0.column("log_probs"), 1)).containsExactly(3, 4, 5);
        assertThat(longRow(c0.column("rewards"), 1)).containsExactly(10);
        assertThat(longRow(c2.column("log_probs"), 0)).containsExactly(2, 3, 4);
        assertThat(longRow(c2.column("rewards"), 1)).containsExactly(30);
      }
    } finally {
      clients.shutdownNow();
    }
  }

  @Test
  void AS017_variableLengthCells(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 2, -1)) {
      put(
          manager,
          range(3),
          Batch.builder()
              .add(
                  "seq",
                  jagged(
                      allocator,
                      new float[] {-0.5f, -1.2f, -0.8f},
                      new float[] {-0.3f, -1.5f, -2.1f, -0.9f},
                      new float[] {-1.1f, -0.7f}))
              .add(
                  "mask",
                  jagged(
                      allocator,
                      new float[] {1, 1, 1},
                      new float[] {1, 1, 1, 1},
                      new float[] {1, 1})));

      try (Batch read = manager.get(meta(List.of("mask", "seq"), 0, 2), allocator)) {
        assertThat(row(read.column("seq"), 0)).containsExactly(-0.5f, -1.2f, -0.8f);
        assertThat(row(read.column("seq"), 1)).containsExactly(-1.1f, -0.7f);
        assertThat(row(read.column("mask"), 1)).containsExactly(1, 1);
      }
    }
  }

  @Test
  void AS018_stringsComeBackEqual(BufferAllocator allocator) {
    List<Object> prompts =
        List.of("Hello world!", "This is a longer sentence for testing", "Test case");
    try (RouterUnderTest manager = manager(allocator, 2, -1)) {
      put(manager, range(3), Batch.builder().objects("prompt", prompts));

      try (Batch read = manager.get(meta(List.of("prompt"), range(3)), allocator)) {
        assertThat(((ObjectColumn) read.column("prompt")).values()).isEqualTo(prompts);
      }
    }
  }

  @Test
  void AS019_singleSampleOfMixedKinds(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 2, -1)) {
      put(
          manager,
          new long[] {0},
          Batch.builder()
              .objects("prompt", List.of("Hello world!"))
              .add("mask", denseLongs(allocator, new long[] {1, 1, 1})));

      try (Batch read = manager.get(meta(List.of("mask", "prompt"), 0), allocator)) {
        assertThat(((ObjectColumn) read.column("prompt")).get(0)).isEqualTo("Hello world!");
        assertThat(longRow(read.column("mask"), 0)).containsExactly(1, 1, 1);
      }
    }
  }

  @Test
  void AS020_clearASubset(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 2, -1)) {
      put(
          manager,
          range(3),
          Batch.builder()
              .add(
                  "log_probs",
                  dense(allocator, new float[] {1}, new float[] {2}, new float[] {3})));

      assertThat(manager.clear(meta(List.of(), 0, 2)).isComplete()).isTrue();

      try (Batch read = manager.get(meta(List.of("log_probs"), 1), allocator)) {
        assertThat(row(read.column("log_probs"), 0)).containsExactly(2);
      }
      assertThatThrownBy(() -> manager.get(meta(List.of("log_probs"), 0), allocator))
          .hasMessageContaining("key 0 not found");
    }
  }

  @Test
  void AS022_capacityErrorNamesTheLimit(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 1, 2)) {
      put(manager, range(2), Batch.builder().add("f", objects(0L, 1L)));

      assertThatThrownBy(() -> put(manager, new long[] {2}, Batch.builder().add("f", objects(2L))))
          .satisfies(
              e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.CAPACITY_EXCEEDED))
          .hasMessageContaining("Storage capacity exceeded");
    }
  }

  @Test
  void AS023_statisticsOfAnUnlimitedUnit(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 1, -1)) {
      put(
          manager,
          range(3),
          Batch.builder()
              .add("a", objects(1L, 2L, 3L))
              .add("b", dense(allocator, new float[] {1}, new float[] {2}, new float[] {3})));

      StorageUnitStats stats = manager.unitStats().getFirst();
      assertThat(stats.unitId())
          .isEqualTo(manager.units().getFirst().id())
          .startsWith("TQ_STORAGE_UNIT_");
      assertThat(stats.capacitySamples()).isEmpty();
      assertThat(stats.samples()).isEqualTo(3);
      assertThat(stats.cells()).isEqualTo(6);
      assertThat(stats.allocatedBytes()).isPositive();
    }
  }

  @Test
  void AS119_floatTensorsRoundTripBitExactly(BufferAllocator allocator) {
    Random random = new Random(119);
    try (RouterUnderTest manager = manager(allocator, 2, -1)) {
      for (DType dtype : List.of(DType.FLOAT16, DType.BFLOAT16, DType.FLOAT32)) {
        float[] values = new float[100 * 10];
        for (int i = 0; i < values.length; i++) {
          values[i] = (float) random.nextGaussian();
        }
        try (Batch batch =
            Batch.builder()
                .dense("x", Tensor.ofFloats(allocator, dtype, values, 100, 10))
                .build()) {
          assertRoundTrip(manager, allocator, batch);
        }
      }
    }
  }

  @Test
  void AS123_batchSizes(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 2, -1)) {
      for (int size : new int[] {1, 5, 10, 32}) {
        float[] data = new float[size * 10];
        long[] labels = new long[size];
        for (int i = 0; i < size; i++) {
          labels[i] = i;
          data[i * 10] = i;
        }
        try (Batch batch =
            Batch.builder()
                .dense("data", Tensor.ofFloats(allocator, DType.FLOAT32, data, size, 10))
                .dense("labels", Tensor.ofLongs(allocator, DType.INT64, labels, size))
                .dense("metadata", Tensor.zeros(allocator, DType.FLOAT32, size, 5))
                .build()) {
          assertRoundTrip(manager, allocator, batch);
        }
      }
      try (Batch empty = Batch.builder().rowCount(0).build();
          Batch read = manager.get(BatchMeta.empty(), allocator)) {
        manager.put(empty, BatchMeta.empty());
        assertThat(read.rowCount()).isZero();
      }
    }
  }

  @Test
  void AS124_emptyAndSpecialValues(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 2, -1);
        Batch batch =
            Batch.builder()
                .dense("empty", Tensor.zeros(allocator, DType.FLOAT32, 3, 0))
                .dense(
                    "special",
                    Tensor.ofFloats(
                        allocator,
                        DType.FLOAT32,
                        new float[] {
                          Float.POSITIVE_INFINITY,
                          Float.NEGATIVE_INFINITY,
                          Float.NaN,
                          0f,
                          -0f,
                          1e-10f,
                          1f,
                          2f,
                          3f
                        },
                        3,
                        3))
                .build()) {
      assertRoundTrip(manager, allocator, batch);
      try (Batch read = manager.get(meta(List.of("empty"), 0, 1, 2), allocator)) {
        assertThat(((DenseColumn) read.column("empty")).tensor().shape()).containsExactly(3, 0);
      }
    }
  }

  @Test
  void AS125_dtypesArePreserved(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 2, -1)) {
      Batch.Builder builder = Batch.builder();
      for (DType dtype : DType.values()) {
        Tensor t = Tensor.zeros(allocator, dtype, 2, 3);
        t.setLong(4, 1);
        builder.dense("f_" + dtype, t);
      }
      try (Batch batch = builder.build()) {
        assertRoundTrip(manager, allocator, batch);
        List<String> fields = batch.fields().stream().sorted().toList();
        try (Batch read = manager.get(meta(fields, 0, 1), allocator)) {
          for (DType dtype : DType.values()) {
            assertThat(((DenseColumn) read.column("f_" + dtype)).dtype()).isEqualTo(dtype);
          }
        }
      }
    }
  }

  @Test
  void AS126_singleRowJaggedStaysJaggedAndDenseStaysDense(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 2, -1)) {
      Tensor component = Tensor.zeros(allocator, DType.FLOAT32, 4, 3);
      try (component;
          Batch batch =
              Batch.builder()
                  .add("nested", JaggedColumn.copyOf(allocator, DType.FLOAT32, List.of(component)))
                  .dense("dense", Tensor.zeros(allocator, DType.FLOAT32, 1, 4, 3))
                  .build()) {
        assertRoundTrip(manager, allocator, batch);
        try (Batch read = manager.get(meta(List.of("dense", "nested"), 0), allocator)) {
          assertThat(read.column("nested").kind()).isEqualTo(ColumnKind.JAGGED);
          assertThat(((JaggedColumn) read.column("nested")).rowShape(0)).containsExactly(4, 3);
          assertThat(((DenseColumn) read.column("dense")).tensor().shape())
              .containsExactly(1, 4, 3);
        }
      }
    }
  }

  @Test
  void AS127_longAndUnicodeStrings(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 2, -1);
        Batch batch =
            Batch.builder()
                .objects(
                    "text",
                    List.of(
                        "x".repeat(11_000),
                        "Hello World! ".repeat(1000),
                        "你好世界🌍🚀 émojis and ümläuts ".repeat(500)))
                .dense("t", Tensor.zeros(allocator, DType.FLOAT32, 3, 2))
                .build()) {
      assertRoundTrip(manager, allocator, batch);
    }
  }

  @Test
  void AS132_unsignedSixtyFourBitIntegersRoundTrip(BufferAllocator allocator) {
    BigInteger max = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
    try (RouterUnderTest manager = manager(allocator, 2, -1);
        Batch batch =
            Batch.builder()
                .objects("n", List.of(max, BigInteger.ONE.shiftLeft(63), Long.MIN_VALUE))
                .build()) {
      assertRoundTrip(manager, allocator, batch);
    }
  }

  @Test
  void AS133_mapsKeepTheirKeysAndNestedValues(BufferAllocator allocator) {
    try (RouterUnderTest manager = manager(allocator, 2, -1);
        Batch batch =
            Batch.builder()
                .objects(
                    "m",
                    List.of(
                        Map.of(1L, "a", "b", 2L),
                        List.of(1L, List.of(2L, 3L)),
                        Map.of("nested", Map.of("k", "v"), "bytes", new byte[] {1, 2})))
                .build()) {
      assertRoundTrip(manager, allocator, batch);
    }
  }
}
