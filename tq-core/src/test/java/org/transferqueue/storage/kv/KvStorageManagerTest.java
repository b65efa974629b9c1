package org.transferqueue.storage.kv;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.storage.PutResult;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;

/** Scenarios 5.F: the KV storage manager against a recording client. */
@ExtendWith(LeakCheckExtension.class)
class KvStorageManagerTest {
  private BufferAllocator allocator;
  private RecordingKvClient client;
  private KvStorageManager manager;
  private final List<ProductionUpdate> updates = Collections.synchronizedList(new ArrayList<>());
  private final List<AutoCloseable> toClose = new ArrayList<>();

  @BeforeEach
  void setUp(BufferAllocator allocator) {
    this.allocator = allocator;
    client = new RecordingKvClient(allocator);
    manager = new KvStorageManager("MooncakeStore", client, updates::add);
  }

  @AfterEach
  void tearDown() throws Exception {
    for (int i = toClose.size() - 1; i >= 0; i--) {
      toClose.get(i).close();
    }
    manager.close();
  }

  private <T extends AutoCloseable> T owned(T resource) {
    toClose.add(resource);
    return resource;
  }

  private Tensor longs(long... values) {
    return owned(Tensor.ofLongs(allocator, DType.INT64, values, values.length));
  }

  private JaggedColumn jagged(long[]... rows) {
    List<Tensor> tensors = new ArrayList<>();
    for (long[] row : rows) {
      tensors.add(longs(row));
    }
    return JaggedColumn.copyOf(allocator, DType.INT64, tensors);
  }

  private static BatchMeta meta(long... gis) {
    return BatchMeta.builder()
        .globalIndexes(gis)
        .generations(new long[gis.length])
        .partitionId("p0")
        .build();
  }

  @Test
  void AS063_AS064_shouldGenerateFieldMajorKeysWithFieldsSortedByCodePoint() {
    assertThat(
            KvKeys.keys(
                KvKeys.sortedFields(
                    List.of("response_mask", "input_ids", "response_ids", "prompt_ids")),
                new long[] {8, 9, 10},
                new long[] {0, 2, 0}))
        .containsExactly(
            "8.0@input_ids",
            "9.2@input_ids",
            "10.0@input_ids",
            "8.0@prompt_ids",
            "9.2@prompt_ids",
            "10.0@prompt_ids",
            "8.0@response_ids",
            "9.2@response_ids",
            "10.0@response_ids",
            "8.0@response_mask",
            "9.2@response_mask",
            "10.0@response_mask");
    assertThat(
            KvKeys.keys(KvKeys.sortedFields(List.of("b", "a")), new long[] {7, 3, 12}, new long[3]))
        .containsExactly("7.0@a", "3.0@a", "12.0@a", "7.0@b", "3.0@b", "12.0@b");
    String supplementary = new String(Character.toChars(0x1F600));
    assertThat(KvKeys.sortedFields(List.of(supplementary, "\uFFFF")))
        .containsExactly("\uFFFF", supplementary);
  }

  @Test
  void shouldRejectFieldNamesThatCollideWithKeys() {
    assertThatThrownBy(() -> KvKeys.sortedFields(List.of("a@b")))
        .hasMessageContaining("a@b")
        .hasMessageContaining("'@'");
    assertThatThrownBy(() -> KvKeys.sortedFields(List.of("x:c12"))).hasMessageContaining("x:c12");
    assertThat(KvKeys.sortedFields(List.of("x:cat"))).containsExactly("x:cat");
  }

  @Test
  void AS065_AS070_shouldFlattenCellsAndSendBackendMetaToTheController() {
    client.metaAnswer =
        keys -> keys.stream().map(k -> Map.<String, Object>of("storage_key", k)).toList();
    try (Batch batch =
        Batch.builder()
            .add(
                "text",
                new DenseColumn(
                    Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4, 5, 6}, 3, 2)))
            .add(
                "label",
                new DenseColumn(Tensor.ofLongs(allocator, DType.INT64, new long[] {0, 1, 2}, 3)))
            .build()) {
      BatchMeta meta = meta(0, 1, 2);
      PutResult result = manager.put(batch, meta);

      assertThat(client.putKeys)
          .containsExactly(
              "0.0@label", "1.0@label", "2.0@label", "0.0@text", "1.0@text", "2.0@text");
      assertThat(client.putValues).hasSize(6);
      assertThat(((Tensor) client.putValues.get(0)).rank()).isZero();
      assertThat(((Tensor) client.putValues.get(4)).toLongArray()).containsExactly(3, 4);
      assertThat(client.putKinds).containsOnly(KvCellKind.TENSOR);
      assertThat(updates).hasSize(1);
      ProductionUpdate update = updates.get(0);
      assertThat(update.partitionId()).isEqualTo("p0");
      assertThat(update.indexes()).containsExactly(0L, 1L, 2L);
      assertThat(update.backendMeta().get(0L))
          .isEqualTo(
              Map.of(
                  "label", Map.of("storage_key", "0.0@label"),
                  "text", Map.of("storage_key", "0.0@text")));
      assertThat(update.fields().get("label")).isEqualTo(FieldSchema.regular(DType.INT64));
      assertThat(update.fields().get("text")).isEqualTo(FieldSchema.regular(DType.INT64, 2));
      BatchMeta applied = result.applyTo(meta);
      assertThat(applied.backendMeta(2).get("text")).isEqualTo(Map.of("storage_key", "2.0@text"));
    }
  }

  @Test
  void AS065_shouldFlattenJaggedColumnsRowByRow() {
    try (Batch batch =
        Batch.builder()
            .add(
                "input_ids",
                jagged(new long[] {1, 2, 3, 4, 5}, new long[] {6, 7, 8, 9}, new long[] {10, 11}))
            .add("prompt_ids", jagged(new long[] {1, 2}, new long[] {6, 7, 8}, new long[] {10}))
            .build()) {
      manager.put(batch, meta(8, 9, 10));
      List<long[]> values = client.putValues.stream().map(v -> ((Tensor) v).toLongArray()).toList();
      assertThat(values)
          .containsExactly(
              new long[] {1, 2, 3, 4, 5},
              new long[] {6, 7, 8, 9},
              new long[] {10, 11},
              new long[] {1, 2},
              new long[] {6, 7, 8},
              new long[] {10});
      assertThat(updates.get(0).fields().get("input_ids").perSampleShapes())
          .containsExactly(List.of(5L), List.of(4L), List.of(2L));
    }
  }

  @Test
  void AS071_AS072_shouldSendNoBackendMetaForNullAndRejectAWrongLength() {
    try (Batch batch = Batch.builder().objects("s", List.of("a", "b")).build()) {
      manager.put(batch, meta(0, 1));
      assertThat(updates.get(0).backendMeta()).isEmpty();
      assertThat(client.putKinds).containsOnly(KvCellKind.OBJECT);

      client.metaAnswer = keys -> List.of(Map.of());
      assertThatThrownBy(() -> manager.put(batch, meta(0, 1)))
          .hasMessageContaining("does not match");
      assertThat(updates).hasSize(1);
    }
  }

  @Test
  void AS073_shouldCheckBatchSizeAndSkipEmptyPuts() {
    try (Batch batch = Batch.builder().objects("s", List.of("a", "b", "c")).build()) {
      assertThatThrownBy(() -> manager.put(batch, meta(0, 1)))
          .hasMessageContaining("Batch size of data (3) does not match expected (2)");
    }
    try (Batch empty = Batch.builder().rowCount(0).build()) {
      manager.put(empty, BatchMeta.empty());
    }
    assertThat(client.calls).isZero();
    assertThat(updates).isEmpty();
  }

  @Test
  void shouldRejectADataParserBeforeTouchingStorage() {
    try (Batch batch = Batch.builder().objects("s", List.of("a")).build()) {
      assertThatThrownBy(() -> manager.put(batch, meta(0), DataParserReference.of("tokenize")))
          .isInstanceOf(TqException.class)
          .satisfies(
              e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.UNSUPPORTED_OPERATION))
          .hasMessageContaining("tokenize");
    }
    assertThat(client.calls).isZero();
  }

  @Test
  void AS074_shouldReturnAnEmptyBatchOfMetaSizeWithoutFields() {
    try (Batch read = manager.get(meta(1, 2, 3, 4), allocator)) {
      assertThat(read.rowCount()).isEqualTo(4);
      assertThat(read.fields()).isEmpty();
    }
    assertThat(client.calls).isZero();
  }

  @Test
  void AS069_shouldPassExpectedShapesDtypesAndBackendMetaFieldMajor() {
    BatchMeta meta =
        BatchMeta.builder()
            .globalIndexes(8, 9, 10)
            .generations(0, 0, 0)
            .partitionId("p0")
            .field(
                "input_ids",
                FieldSchema.nestedOf(DType.INT64, List.of(List.of(5L), List.of(4L), List.of(2L))))
            .field(
                "prompt_ids",
                FieldSchema.nestedOf(DType.INT64, List.of(List.of(2L), List.of(3L), List.of(1L))))
            .backendMeta(
                List.of(
                    Map.of("input_ids", Map.of("m", 1)),
                    Map.of(),
                    Map.of("prompt_ids", Map.of("m", 2))))
            .build();
    assertThatThrownBy(() -> manager.get(meta, allocator)).isInstanceOf(RuntimeException.class);
    assertThat(client.getShapes.stream().map(s -> s[0]).toList())
        .containsExactly(5L, 4L, 2L, 2L, 3L, 1L);
    assertThat(client.getDtypes).containsOnly(DType.INT64);
    assertThat(client.getMeta)
        .containsExactly(Map.of("m", 1L), null, null, null, null, Map.of("m", 2L));
  }

  @Test
  void AS075_AS076_shouldPassKeysAndMetaToClearAndRemoveNothingWithoutFields() {
    // Samples that hold no cell yet (inserted, or tags only) have no key to remove.
    assertThat(manager.clear(meta(3, 4)).isComplete()).isTrue();
    assertThat(client.clearKeys).isNull();
    BatchMeta meta =
        BatchMeta.builder()
            .globalIndexes(3, 4)
            .generations(0, 1)
            .partitionId("p0")
            .field("b", FieldSchema.nonTensorField())
            .field("a", FieldSchema.nonTensorField())
            .backendMeta(List.of(Map.of("a", Map.of("packed_size", 13)), Map.of()))
            .build();
    assertThat(manager.clear(meta).isComplete()).isTrue();
    assertThat(client.clearKeys).containsExactly("3.0@a", "4.1@a", "3.0@b", "4.1@b");
    assertThat(client.clearMeta).containsExactly(Map.of("packed_size", 13L), null, null, null);
  }

  @Test
  void shouldRouteEveryCellKeyOfASampleByItsGlobalIndex() {
    assertThat(KvKeys.sampleOf(KvKeys.key(17, 3, "responses"))).isEqualTo(17);
    assertThat(KvKeys.sampleOf(KvKeys.key(17, 3, "responses") + ":c4")).isEqualTo(17);
    assertThat(KvKeys.sampleOf(KvKeys.key(2147483646L, 9, "x"))).isEqualTo(2147483646L);
    assertThat(KvKeys.sampleOf("plain-key")).isEqualTo(-1);
    assertThat(KvKeys.sampleOf(".3@x")).isEqualTo(-1);
    assertThat(KvKeys.sampleOf("17@x")).as("no generation").isEqualTo(-1);
    assertThat(KvKeys.sampleOf("1234567890123456789.0@x")).as("too many digits").isEqualTo(-1);
    assertThat(KvKeys.sampleOf("")).isEqualTo(-1);
  }

  @Test
  void shouldRefuseToStoreASampleWithoutAKnownGeneration() {
    try (Batch batch = Batch.builder().objects("x", List.of("a")).build()) {
      BatchMeta unknown = BatchMeta.builder().globalIndexes(3).partitionId("p0").build();
      assertThatThrownBy(() -> manager.put(batch, unknown))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("sample 3")
          .hasMessageContaining("generation");
      assertThat(client.putKeys).isNull();
    }
  }

  @Test
  void AS080_shouldReturnARankOneColumnAsDense1D() {
    try (Batch batch =
        Batch.builder()
            .add(
                "label",
                new DenseColumn(Tensor.ofLongs(allocator, DType.INT64, new long[] {0, 1, 2}, 3)))
            .build()) {
      BatchMeta meta = manager.put(batch, meta(0, 1, 2)).applyTo(meta(0, 1, 2));
      assertThat(meta.field("label").shape()).isEmpty();
      try (Batch read = manager.get(meta, allocator)) {
        DenseColumn label = (DenseColumn) read.column("label");
        assertThat(label.tensor().shape()).containsExactly(3);
        assertThat(label.tensor().toLongArray()).containsExactly(0, 1, 2);
      }
    }
  }

  @Test
  void shouldRebuildColumnKindsFromTheSchema() {
    Map<String, Object> map = new HashMap<>();
    map.put("k", 1L);
    try (Batch batch =
        Batch.builder()
            .add(
                "dense",
                new DenseColumn(
                    Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4}, 2, 2)))
            .add("jag", jagged(new long[] {1}, new long[] {}))
            .objects("obj", Arrays.asList(map, null))
            .build()) {
      BatchMeta meta = manager.put(batch, meta(5, 6)).applyTo(meta(5, 6));
      try (Batch read = manager.get(meta, allocator)) {
        assertThat(read.column("dense").kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(read.column("jag").kind()).isEqualTo(ColumnKind.JAGGED);
        assertThat(read.column("obj").kind()).isEqualTo(ColumnKind.OBJECT);
        assertThat(read.contentEquals(batch)).isTrue();
      }
    }
  }

  @Test
  void shouldReadTensorFieldsStraightIntoTheResultColumns() {
    try (Batch batch =
        Batch.builder()
            .add(
                "dense",
                new DenseColumn(
                    Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4}, 2, 2)))
            .add("jag", jagged(new long[] {7, 8, 9}, new long[] {}))
            .objects("obj", Arrays.asList("x", "y"))
            .build()) {
      BatchMeta meta = manager.put(batch, meta(5, 6)).applyTo(meta(5, 6));
      try (Batch read = manager.get(meta, allocator)) {
        assertThat(client.getIntoKeys)
            .containsExactly("5.0@dense", "6.0@dense", "5.0@jag", "6.0@jag");
        assertThat(client.getIntoRegions)
            .containsExactly(
                ((DenseColumn) read.column("dense")).tensor().segment(),
                ((JaggedColumn) read.column("jag")).values().segment());
        assertThat(read.contentEquals(batch)).isTrue();
      }
    }
  }
}
