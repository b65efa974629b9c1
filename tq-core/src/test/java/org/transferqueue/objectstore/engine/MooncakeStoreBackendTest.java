package org.transferqueue.objectstore.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.TqException;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.storage.StorageContext;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Seeds;

/** The MooncakeStore backend end to end on the embedded engine: every column kind and dtype. */
@ExtendWith(LeakCheckExtension.class)
class MooncakeStoreBackendTest {
  private static final MooncakeStoreConfig CONFIG =
      MooncakeStoreConfig.builder().globalSegmentSize(64L << 20).localBufferSize(1L << 20).build();

  private BufferAllocator allocator;
  private StorageManager manager;
  private final List<ProductionUpdate> updates = Collections.synchronizedList(new ArrayList<>());

  @BeforeEach
  void setUp(BufferAllocator allocator) {
    this.allocator = allocator;
    StorageManagerRegistry registry =
        StorageManagerRegistry.builder()
            .register(
                StorageManagerRegistry.MOONCAKE_STORE, ConfigMapper.embeddedMooncakeStore(CONFIG))
            .build();
    manager = registry.create("MooncakeStore", new StorageContext(allocator, updates::add));
  }

  @AfterEach
  void tearDown() {
    manager.close();
  }

  private static BatchMeta meta(int n, long firstGi) {
    long[] gis = new long[n];
    for (int i = 0; i < n; i++) {
      gis[i] = firstGi + i;
    }
    return BatchMeta.builder()
        .globalIndexes(gis)
        .generations(new long[gis.length])
        .partitionId("train")
        .build();
  }

  private Tensor random(DType dtype, Random random, long... shape) {
    Tensor tensor = Tensor.zeros(allocator, dtype, shape);
    double[] specials = {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0};
    for (long i = 0; i < tensor.numel(); i++) {
      if (dtype.isFloatingPoint()) {
        tensor.setDouble(i, i < specials.length ? specials[(int) i] : random.nextGaussian());
      } else {
        tensor.setLong(i, random.nextLong());
      }
    }
    return tensor;
  }

  @Test
  void shouldRoundTripEveryDtypeAndColumnKind() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    int n = 3;
    Batch.Builder builder = Batch.builder();
    for (DType dtype : DType.values()) {
      builder.add("dense_" + dtype.torchName(), new DenseColumn(random(dtype, random, n, 2, 3)));
      builder.add("scalar_" + dtype.torchName(), new DenseColumn(random(dtype, random, n)));
      List<Tensor> rows = new ArrayList<>();
      try {
        rows.add(random(dtype, random, 5));
        rows.add(random(dtype, random, 0));
        rows.add(random(dtype, random, 2));
        builder.add("jagged_" + dtype.torchName(), JaggedColumn.copyOf(allocator, dtype, rows));
      } finally {
        rows.forEach(Tensor::close);
      }
    }
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("ids", List.of(1L, 2L, 3L));
    nested.put("score", 0.5);
    nested.put("none", null);
    nested.put("t", Tensor.ofFloats(allocator, DType.BFLOAT16, new float[] {1.5f, -2f}, 2));
    builder.objects("text", Arrays.asList("héllo wörld", "", null));
    builder.objects("info", Arrays.asList(nested, Map.of(), List.of(true, new byte[] {1, 2})));
    try (Batch batch = builder.build()) {
      BatchMeta meta = meta(n, 100);
      BatchMeta stored = manager.put(batch, meta).applyTo(meta);
      assertThat(stored.backendMeta(0).get("text")).isInstanceOf(Map.class);
      assertThat(updates).hasSize(1);
      try (Batch read = manager.get(stored, allocator)) {
        for (String field : batch.fields()) {
          assertThat(read.column(field).contentEquals(batch.column(field)))
              .as(
                  "field %s, seed %d: %s vs %s",
                  field, seed, read.column(field), batch.column(field))
              .isTrue();
        }
        assertThat(read.fields()).containsExactlyInAnyOrderElementsOf(batch.fields());
        assertThat(read.column("dense_float32").kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(read.column("jagged_int64").kind()).isEqualTo(ColumnKind.JAGGED);
        assertThat(read.column("info").kind()).isEqualTo(ColumnKind.OBJECT);
        assertThat(((DenseColumn) read.column("scalar_int32")).tensor().shape()).containsExactly(n);
      }
    }
  }

  @Test
  void AS082_shouldReturnDataIndependentOfTheStore() {
    try (Batch batch =
        Batch.builder()
            .dense("f", Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {0, 1, 2, 3}, 2, 2))
            .build()) {
      BatchMeta stored = manager.put(batch, meta(2, 0)).applyTo(meta(2, 0));
      try (Batch first = manager.get(stored, allocator)) {
        ((DenseColumn) first.column("f")).tensor().setFloat(0, 99999f);
      }
      try (Batch second = manager.get(stored, allocator)) {
        assertThat(((DenseColumn) second.column("f")).tensor().getFloat(0)).isZero();
      }
    }
  }

  @Test
  void shouldOverwriteOnReputAndFailToReadAfterClear() {
    try (Batch first = Batch.builder().objects("s", List.of("a", "b")).build();
        Batch second = Batch.builder().objects("s", List.of("longer value", "c")).build()) {
      BatchMeta meta = meta(2, 7);
      manager.put(first, meta);
      BatchMeta stored = manager.put(second, meta).applyTo(meta);
      try (Batch read = manager.get(stored, allocator)) {
        assertThat(read.contentEquals(second)).isTrue();
      }
      assertThat(manager.clear(stored).isComplete()).isTrue();
      assertThatThrownBy(() -> manager.get(stored, allocator))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("7.0@s");
    }
  }

  @Test
  void shouldNotifyOncePerPartition() {
    try (Batch batch = Batch.builder().objects("s", List.of("a", "b", "c")).build()) {
      BatchMeta meta =
          BatchMeta.builder()
              .globalIndexes(0, 1, 2)
              .generations(0, 0, 0)
              .partitionIds(List.of("x", "y", "x"))
              .build();
      manager.put(batch, meta);
      assertThat(updates).hasSize(2);
      assertThat(updates.get(0).partitionId()).isEqualTo("x");
      assertThat(updates.get(0).indexes()).containsExactly(0L, 2L);
      assertThat(updates.get(1).indexes()).containsExactly(1L);
    }
  }

  @Test
  void AS118_shouldFailWhenTheStoreCannotBeSetUp() {
    StorageManagerRegistry registry =
        StorageManagerRegistry.builder()
            .register(
                StorageManagerRegistry.MOONCAKE_STORE, ConfigMapper.embeddedMooncakeStore(CONFIG))
            .build();
    try (BufferAllocator small = allocator.newChildAllocator("small", 1L << 20)) {
      assertThatThrownBy(
              () -> registry.create("MooncakeStore", new StorageContext(small, updates::add)))
          .hasMessageContaining("Mooncake store setup failed with error code: -600");
    }
  }
}
