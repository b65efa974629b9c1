package org.transferqueue.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.meta.FieldSchema.shapeOf;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.tensor.DType;

class BatchMetaTest {
  private static final FieldSchema F32_2 = FieldSchema.regular(DType.FLOAT32, 2);

  private static BatchMeta.Builder batch(long... indexes) {
    return BatchMeta.builder().globalIndexes(indexes).partitionId("partition_0");
  }

  private static List<Map<String, Object>> uidTags(String key, int n) {
    return IntStream.range(0, n).mapToObj(i -> Map.<String, Object>of(key, (long) i)).toList();
  }

  @Test
  void K1_sizeFieldNamesAndPartitions() {
    BatchMeta meta =
        batch(0, 1, 2).field("field_b", F32_2).field("field_a", F32_2).allProduced().build();
    assertThat(meta.size()).isEqualTo(3);
    assertThat(meta.fieldNames()).containsExactly("field_a", "field_b");
    assertThat(meta.partitionIds()).containsExactly("partition_0", "partition_0", "partition_0");
    assertThat(meta.globalIndexes()).containsExactly(0L, 1L, 2L);
  }

  @Test
  void K2_statusVectorHasOneEntryPerSample() {
    BatchMeta meta = batch(0, 1, 2).field("field_a", F32_2).allProduced().build();
    assertThat(meta.productionStatus()).containsExactly(true, true, true);
    assertThat(meta.isReady()).isTrue();
  }

  @Test
  void K3_chunkSplitsRowsWithTagsAndBackendMeta() {
    List<Map<String, Object>> backend =
        IntStream.range(0, 10)
            .mapToObj(i -> Map.<String, Object>of("f", Map.of("key", (long) i)))
            .toList();
    BatchMeta meta =
        batch(LongStream.range(0, 10).toArray())
            .tags(uidTags("uid", 10))
            .backendMeta(backend)
            .build();
    List<BatchMeta> chunks = meta.chunk(3);
    assertThat(chunks).extracting(BatchMeta::size).containsExactly(4, 3, 3);
    assertThat(chunks.get(0).tags(0)).isEqualTo(Map.of("uid", 0L));
    assertThat(chunks.get(0).tags(3)).isEqualTo(Map.of("uid", 3L));
    assertThat(chunks.get(1).tags(0)).isEqualTo(Map.of("uid", 4L));
    assertThat(chunks.get(1).backendMeta(0)).isEqualTo(Map.of("f", Map.of("key", 4L)));
    assertThat(chunks.get(2).globalIndexes()).containsExactly(7L, 8L, 9L);
  }

  @Test
  void K4_chunkByPartitionGroupsInFirstAppearanceOrder() {
    BatchMeta meta =
        BatchMeta.builder()
            .globalIndexes(10, 11, 12, 13)
            .partitionIds(List.of("part_A", "part_B", "part_A", "part_B"))
            .build();
    List<BatchMeta> chunks = meta.chunkByPartition();
    assertThat(chunks).hasSize(2);
    assertThat(chunks.get(0).globalIndexes()).containsExactly(10L, 12L);
    assertThat(chunks.get(0).partitionIds()).containsOnly("part_A");
    assertThat(chunks.get(1).globalIndexes()).containsExactly(11L, 13L);

    BatchMeta three =
        BatchMeta.builder()
            .globalIndexes(10, 11, 12, 13)
            .partitionIds(List.of("B", "A", "B", "C"))
            .build();
    assertThat(three.chunkByPartition())
        .extracting(BatchMeta::globalIndexes)
        .containsExactly(List.of(10L, 12L), List.of(11L), List.of(13L));
  }

  @Test
  void K5_concatAppendsRows() {
    BatchMeta a = batch(0, 1).field("x", F32_2).allProduced().build();
    BatchMeta b = batch(2, 3).field("x", F32_2).allProduced().build();
    BatchMeta c = BatchMeta.concat(List.of(a, b));
    assertThat(c.size()).isEqualTo(4);
    assertThat(c.globalIndexes()).containsExactly(0L, 1L, 2L, 3L);
    assertThat(c.field("x")).isEqualTo(F32_2);
    assertThat(c.isReady()).isTrue();
  }

  @Test
  void K6_tagsMergedPerSample() {
    BatchMeta meta = batch(0, 1).build();
    BatchMeta tagged = meta.withTagsMerged(List.of(Map.of("tag", "alpha"), Map.of("tag", "beta")));
    assertThat(tagged.tags(0)).containsEntry("tag", "alpha");
    assertThat(tagged.tags(1)).containsEntry("tag", "beta");
    assertThat(meta.tags(0)).isEmpty();
  }

  @Test
  void K7_backendMetaPerSampleReadableBack() {
    BatchMeta meta = batch(0, 1).field("field_a", F32_2).build();
    BatchMeta updated = meta.withBackendMeta(0, "field_a", Map.of("storage_key", "abc"));
    assertThat(updated.backendMeta(0)).isEqualTo(Map.of("field_a", Map.of("storage_key", "abc")));
    assertThat(updated.backendMeta(1)).isEmpty();
    assertThat(meta.backendMeta(0)).isEmpty();
  }

  @Test
  void K8_sizeEqualsNumberOfSamples() {
    BatchMeta meta = batch(0, 1, 2, 3, 4).build();
    assertThat(meta.size()).isEqualTo(5);
    assertThat(meta.samples()).hasSize(5);
  }

  @Test
  void K9_rebuildFromAccessorsPreservesEverything() {
    BatchMeta meta =
        batch(0, 1)
            .field("vec", FieldSchema.regular(DType.FLOAT32, 4))
            .field("scalar", FieldSchema.regular(DType.INT64))
            .allProduced()
            .extraInfo(Map.of("step", 42))
            .tags(List.of(Map.of("score", 0.9), Map.of("score", 0.8)))
            .build();
    BatchMeta rebuilt =
        BatchMeta.builder()
            .globalIndexes(meta.globalIndexes())
            .partitionIds(meta.partitionIds())
            .fieldSchema(meta.fieldSchema())
            .productionStatus(meta.productionStatus())
            .extraInfo(meta.extraInfo())
            .tags(meta.tags())
            .backendMeta(meta.backendMeta())
            .build();
    assertThat(rebuilt).isEqualTo(meta).hasSameHashCodeAs(meta);
    assertThat(rebuilt.field("scalar").shape()).isEmpty();
    assertThat(rebuilt.field("vec").dtype()).isEqualTo(DType.FLOAT32);
    assertThat(rebuilt.extraInfo()).containsEntry("step", 42L);
    assertThat(rebuilt.tags()).containsExactly(Map.of("score", 0.9), Map.of("score", 0.8));
  }

  @Test
  void K10_concatRejectsConflictingExtraInfo() {
    BatchMeta a = batch(0).extraInfo(Map.of("step", 1)).build();
    BatchMeta b = batch(1).extraInfo(Map.of("step", 2)).build();
    assertThatThrownBy(() -> BatchMeta.concat(List.of(a, b)))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("conflicting values")
        .hasMessageContaining("step");
  }

  @Test
  void K11_concatUnionsExtraInfoKeys() {
    BatchMeta a = batch(0).extraInfo(Map.of("common", "ok", "only_a", 1)).build();
    BatchMeta b = batch(1).extraInfo(Map.of("common", "ok", "only_b", 2)).build();
    assertThat(BatchMeta.concat(List.of(a, b)).extraInfo())
        .isEqualTo(Map.of("common", "ok", "only_a", 1L, "only_b", 2L));
  }

  @Test
  void K12_concatKeepsEqualArrayValues() {
    BatchMeta a = batch(0).extraInfo(Map.of("t", List.of(1.0, 2.0, 3.0))).build();
    BatchMeta b = batch(1).extraInfo(Map.of("t", List.of(1.0, 2.0, 3.0))).build();
    assertThat(BatchMeta.concat(List.of(a, b)).extraInfo().get("t"))
        .isEqualTo(List.of(1.0, 2.0, 3.0));
  }

  @Test
  void K13_addFieldsOnImmutableValueReturnsReadyBatch() {
    BatchMeta meta = batch(0, 1, 2).build();
    BatchMeta added = meta.addFields(Map.of("x", FieldSchema.regular(DType.FLOAT32, 4)), true);
    assertThat(added.isReady()).isTrue();
    assertThat(added.field("x").shape()).isEqualTo(shapeOf(4));
    assertThat(meta.isReady()).isFalse();
    assertThat(meta.fieldNames()).isEmpty();
  }

  @Test
  void K14_callerIndexListIsCopied() {
    List<Long> indexes = new ArrayList<>(List.of(0L, 1L, 2L));
    BatchMeta meta = BatchMeta.builder().globalIndexes(indexes).partitionId("p").build();
    indexes.add(3L);
    assertThat(meta.globalIndexes()).containsExactly(0L, 1L, 2L);
  }

  @Test
  void K15_callerExtraInfoIsCopied() {
    Map<String, Object> info = new HashMap<>(Map.of("a", 1));
    Map<String, Object> nested = new HashMap<>(Map.of("lr", 0.1));
    info.put("config", nested);
    BatchMeta meta = batch(0).extraInfo(info).build();
    info.put("b", 2);
    nested.put("lr", 0.5);
    assertThat(meta.extraInfo()).isEqualTo(Map.of("a", 1L, "config", Map.of("lr", 0.1)));
    assertThatThrownBy(() -> meta.extraInfo().put("c", 3))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void K16_schemaEntriesAreImmutableValues() {
    Map<String, FieldSchema> schema = new HashMap<>(Map.of("x", F32_2));
    BatchMeta meta = batch(0).fieldSchema(schema).build();
    schema.put("x", FieldSchema.regular(DType.INT64, 2));
    assertThat(meta.field("x").dtype()).isEqualTo(DType.FLOAT32);
    List<Long> shape = new ArrayList<>(List.of(2L));
    FieldSchema entry = FieldSchema.regular(DType.FLOAT32, shape);
    shape.set(0, 9L);
    assertThat(entry.shape()).containsExactly(2L);
  }

  @Test
  void K17_selectFieldsResultIndependentOfSource() {
    BatchMeta meta = batch(0, 1).field("x", F32_2).extraInfo(Map.of("k", "v")).build();
    BatchMeta selected = meta.selectFields(List.of("x")).withExtraInfo("k", "changed");
    assertThat(selected.extraInfo()).containsEntry("k", "changed");
    assertThat(meta.extraInfo()).containsEntry("k", "v");
  }

  @Test
  void K18_tagUpdateOnSelectionLeavesSourceTags() {
    BatchMeta meta = batch(0, 1).field("x", F32_2).tags(uidTags("u", 2)).build();
    BatchMeta updated =
        meta.selectFields(List.of("x")).withTagsMerged(List.of(Map.of("u", 9), Map.of()));
    assertThat(updated.tags(0)).containsEntry("u", 9L);
    assertThat(meta.tags(0)).containsEntry("u", 0L);
  }

  @Test
  void K19_concatKeepsTagsAtTheirPositions() {
    BatchMeta a = batch(0, 1).build();
    BatchMeta b = batch(2, 3).tags(List.of(Map.of("id", 2), Map.of("id", 3))).build();
    BatchMeta c = BatchMeta.concat(List.of(a, b));
    assertThat(c.tags()).containsExactly(Map.of(), Map.of(), Map.of("id", 2L), Map.of("id", 3L));
  }

  @Test
  void K20_concatKeepsIdenticalExtraInfo() {
    Map<String, Object> info = Map.of("step", 42, "mode", "train", "config", Map.of("lr", 0.01));
    BatchMeta a = batch(0).extraInfo(info).build();
    BatchMeta b = batch(1).extraInfo(info).build();
    assertThat(BatchMeta.concat(List.of(a, b)).extraInfo())
        .isEqualTo(Map.of("step", 42L, "mode", "train", "config", Map.of("lr", 0.01)));
  }

  @Test
  void K21_chunkThenConcatRestoresBatch() {
    Map<String, Object> info =
        Map.of("metrics", Map.of("loss", 0.5), "step", 100, "tags", List.of("train"));
    BatchMeta meta =
        batch(0, 1, 2, 3, 4, 5).field("x", F32_2).allProduced().extraInfo(info).build();
    BatchMeta restored = BatchMeta.concat(meta.chunk(3));
    assertThat(restored.size()).isEqualTo(6);
    assertThat(restored.globalIndexes()).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
    assertThat(restored.extraInfo()).isEqualTo(meta.extraInfo());
    assertThat(restored).isEqualTo(meta);
  }

  @Test
  void K22_unionMergesFieldsAndTags() {
    BatchMeta a =
        batch(0, 1, 2)
            .field("field_a", F32_2)
            .allProduced()
            .tags(List.of(Map.of("a", 1), Map.of("a", 2), Map.of("a", 3)))
            .build();
    BatchMeta b =
        batch(0, 1, 2)
            .field("field_b", F32_2)
            .allProduced()
            .tags(List.of(Map.of("b", 10), Map.of("b", 20), Map.of("b", 30)))
            .build();
    BatchMeta u = a.union(b);
    assertThat(u.fieldNames()).containsExactly("field_a", "field_b");
    assertThat(u.isReady()).isTrue();
    assertThat(u.tags())
        .containsExactly(
            Map.of("a", 1L, "b", 10L), Map.of("a", 2L, "b", 20L), Map.of("a", 3L, "b", 30L));
  }

  @Test
  void K23_unionOtherWinsOnFieldClash() {
    BatchMeta a = batch(0, 1).field("field_a", F32_2).build();
    BatchMeta b = batch(0, 1).field("field_a", FieldSchema.regular(DType.INT64, 8)).build();
    assertThat(a.union(b).field("field_a")).isEqualTo(FieldSchema.regular(DType.INT64, 8));
  }

  @Test
  void K24_unionAndsProductionStatus() {
    BatchMeta a = batch(0, 1).productionStatus(List.of(true, false)).build();
    BatchMeta b = batch(0, 1).productionStatus(List.of(true, true)).build();
    BatchMeta u = a.union(b);
    assertThat(u.productionStatus()).containsExactly(true, false);
    assertThat(u.isReady()).isFalse();
  }

  @Test
  void K25_unionRejectsDifferentIndexes() {
    BatchMeta a = batch(0, 1).build();
    assertThatThrownBy(() -> a.union(batch(1, 2).build()))
        .hasMessageContaining("global_indexes do not match");
    assertThatThrownBy(() -> a.union(batch(0, 1, 2).build()))
        .hasMessageContaining("global_indexes do not match");
  }

  @Test
  void K26_unionRejectsDifferentPartitions() {
    BatchMeta a = BatchMeta.builder().globalIndexes(0, 1).partitionIds(List.of("p0", "p0")).build();
    BatchMeta b = BatchMeta.builder().globalIndexes(0, 1).partitionIds(List.of("p0", "p1")).build();
    assertThatThrownBy(() -> a.union(b))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("partition_ids do not match");
  }

  @Test
  void K27_unionWithEmptyReturnsNonEmptySide() {
    BatchMeta x = batch(0, 1).field("x", F32_2).extraInfo(Map.of("k", 1)).build();
    BatchMeta left = x.union(BatchMeta.empty());
    BatchMeta right = BatchMeta.empty().union(x);
    assertThat(left).isEqualTo(x);
    assertThat(right).isEqualTo(x);
    assertThat(x.union(null)).isEqualTo(x);
    BatchMeta changed = left.withExtraInfo("k", 2);
    assertThat(x.extraInfo()).containsEntry("k", 1L);
    assertThat(changed.extraInfo()).containsEntry("k", 2L);
  }

  @Test
  void K28_constructionRejectsMisalignedColumns() {
    assertThatThrownBy(
            () -> BatchMeta.builder().globalIndexes(0, 1).partitionIds(List.of("p")).build())
        .isInstanceOf(TqException.class)
        .hasMessageContaining("Length mismatch")
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.SHAPE_MISMATCH);
    assertThatThrownBy(() -> batch(0, 1).productionStatus(List.of(true)).build())
        .hasMessageContaining("production status length 1");
    assertThatThrownBy(() -> batch(0, 1).tags(List.of(Map.of("a", 1))).build())
        .hasMessageContaining("tags length 1");
    FieldSchema nested = FieldSchema.nestedOf(DType.FLOAT32, List.of(shapeOf(3)));
    assertThatThrownBy(() -> batch(0, 1).field("x", nested).build())
        .hasMessageContaining("per-sample shapes of field 'x' have length 1");
  }

  @Test
  void K29_fieldNamesSorted() {
    BatchMeta meta = batch(0).field("z", F32_2).field("a", F32_2).build();
    assertThat(meta.fieldNames()).containsExactly("a", "z");
  }

  @Test
  void K30_emptyBatch() {
    BatchMeta empty = BatchMeta.empty();
    assertThat(empty.size()).isZero();
    assertThat(empty.isReady()).isFalse();
    assertThat(empty.fieldNames()).isEmpty();
    assertThat(empty.productionStatus()).isEmpty();
    assertThat(BatchMeta.empty(Map.of("a", 1)).extraInfo()).containsEntry("a", 1L);
  }

  @Test
  void K31_selectSamples() {
    BatchMeta meta = batch(5, 6, 7).field("x", F32_2).allProduced().build();
    assertThat(meta.selectSamples(0, 0).globalIndexes()).containsExactly(5L, 5L);
    assertThatThrownBy(() -> meta.selectSamples(3)).hasMessageContaining("must be in range");
    assertThatThrownBy(() -> meta.selectSamples(-1)).hasMessageContaining("must be in range");
    BatchMeta none = meta.selectSamples();
    assertThat(none.size()).isZero();
    assertThat(none.isReady()).isFalse();
    assertThat(none.fieldNames()).containsExactly("x");
  }

  @Test
  void K32_getAndSlice() {
    BatchMeta meta = batch(5, 6, 7).build();
    assertThat(meta.get(-1).globalIndexes()).containsExactly(7L);
    assertThatThrownBy(() -> meta.get(3))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("out of range");
    assertThat(meta.slice(0, Integer.MAX_VALUE, 2).globalIndexes()).containsExactly(5L, 7L);
    assertThat(meta.slice(-1, Integer.MIN_VALUE, -1).globalIndexes()).containsExactly(7L, 6L, 5L);
    assertThat(meta.slice(1, -1, 1).globalIndexes()).containsExactly(6L);
  }

  @Test
  void K33_chunkSizesAndRejectsZero() {
    BatchMeta meta = batch(5, 6, 7).build();
    assertThat(meta.chunk(2))
        .extracting(BatchMeta::globalIndexes)
        .containsExactly(List.of(5L, 6L), List.of(7L));
    assertThat(meta.chunk(5)).extracting(BatchMeta::size).containsExactly(1, 1, 1, 0, 0);
    assertThatThrownBy(() -> meta.chunk(0))
        .isInstanceOf(TqException.class)
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }

  @Test
  void K34_selectFieldsFiltersBackendMeta() {
    Map<String, Object> row0 = new LinkedHashMap<>();
    row0.put("f", Map.of("x", 0));
    row0.put("_g", 1);
    BatchMeta meta =
        batch(0, 1, 2)
            .field("f", F32_2)
            .backendMeta(List.of(row0, Map.of("f", Map.of("x", 1)), Map.of()))
            .build();
    BatchMeta none = meta.selectFields(List.of("g", "zz"));
    assertThat(none.fieldNames()).isEmpty();
    assertThat(none.backendMeta()).containsExactly(Map.of("_g", 1L), Map.of(), Map.of());
    BatchMeta f = meta.selectFields(List.of("f"));
    assertThat(f.backendMeta())
        .containsExactly(
            Map.of("f", Map.of("x", 0L), "_g", 1L), Map.of("f", Map.of("x", 1L)), Map.of());
  }

  @Test
  void K35_reorderPermutesEveryColumnAndValidates() {
    FieldSchema nested =
        FieldSchema.nestedOf(DType.FLOAT32, List.of(shapeOf(1), shapeOf(2), shapeOf(3)));
    BatchMeta meta =
        batch(5, 6, 7)
            .field("n", nested)
            .productionStatus(List.of(true, true, false))
            .tags(uidTags("u", 3))
            .build();
    BatchMeta r = meta.reorder(2, 0, 1);
    assertThat(r.globalIndexes()).containsExactly(7L, 5L, 6L);
    assertThat(r.productionStatus()).containsExactly(false, true, true);
    assertThat(r.tags()).containsExactly(Map.of("u", 2L), Map.of("u", 0L), Map.of("u", 1L));
    assertThat(r.shapes("n")).containsExactly(shapeOf(3), shapeOf(1), shapeOf(2));
    assertThat(meta.globalIndexes()).containsExactly(5L, 6L, 7L);
    assertThatThrownBy(() -> meta.reorder(0, 0, 1)).hasMessageContaining("duplicates");
    assertThatThrownBy(() -> meta.reorder(0, 1)).hasMessageContaining("does not match");
    assertThatThrownBy(() -> meta.reorder(0, 1, 3)).hasMessageContaining("must be in range");
    assertThatThrownBy(() -> meta.reorder(-1, 0, 1)).hasMessageContaining("must be in range");
  }

  @Test
  void K36_concatWithNestedMemberBecomesNested() {
    BatchMeta a = batch(0, 1).field("x", F32_2).allProduced().build();
    BatchMeta b =
        batch(2)
            .field("x", FieldSchema.nestedOf(DType.FLOAT32, List.of(shapeOf(5))))
            .productionStatus(List.of(false))
            .build();
    BatchMeta c = BatchMeta.concat(List.of(a, b));
    assertThat(c.field("x").nested()).isTrue();
    assertThat(c.field("x").shape()).isNull();
    assertThat(c.field("x").perSampleShapes()).containsExactly(shapeOf(2), shapeOf(2), shapeOf(5));
    assertThat(c.productionStatus()).containsExactly(true, true, false);
    assertThat(c.isReady()).isFalse();
  }

  @Test
  void K37_concatValidatesFieldNamesAndDtypes() {
    BatchMeta x = batch(0).field("x", F32_2).build();
    BatchMeta y = batch(1).field("y", F32_2).build();
    assertThatThrownBy(() -> BatchMeta.concat(List.of(x, y)))
        .hasMessageContaining("field_names mismatch at chunk[1]")
        .hasMessageContaining("extra [y]")
        .hasMessageContaining("missing [x]");
    BatchMeta xInt = batch(1).field("x", FieldSchema.regular(DType.INT64, 2)).build();
    assertThatThrownBy(() -> BatchMeta.concat(List.of(x, xInt)))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("dtype mismatch")
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.SCHEMA_CONFLICT);
    BatchMeta unvalidated = BatchMeta.concat(List.of(x, y), false);
    assertThat(unvalidated.fieldNames()).containsExactly("x");
    assertThat(unvalidated.size()).isEqualTo(2);
  }

  @Test
  void K38_concatComparesExtraInfoTypes() {
    BatchMeta a = batch(0).extraInfo(Map.of("a", 1)).build();
    BatchMeta b = batch(1).extraInfo(Map.of("a", 1.0)).build();
    assertThatThrownBy(() -> BatchMeta.concat(List.of(a, b)))
        .hasMessageContaining("conflicting values");
    Map<String, Object> nullValue = new HashMap<>();
    nullValue.put("a", null);
    BatchMeta c = batch(0).extraInfo(nullValue).build();
    BatchMeta d = batch(1).build();
    BatchMeta joined = BatchMeta.concat(List.of(c, d));
    assertThat(joined.extraInfo()).containsKey("a");
    assertThat(joined.extraInfo().get("a")).isNull();
  }

  @Test
  void K39_dtypesAndShapes() {
    BatchMeta nested =
        batch(0).field("x", FieldSchema.nestedOf(DType.FLOAT32, List.of(shapeOf(5)))).build();
    assertThat(nested.shapes("x")).containsExactly(shapeOf(5));
    BatchMeta regular = batch(0, 1).field("x", F32_2).build();
    assertThat(regular.shapes("x")).containsExactly(shapeOf(2), shapeOf(2));
    assertThat(regular.dtypes("x")).containsExactly(DType.FLOAT32, DType.FLOAT32);
    assertThatThrownBy(() -> regular.shapes("zz"))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("'zz' not found")
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.UNKNOWN_FIELD);
  }

  @Test
  void K40_tagsMergeKeepsOtherKeysAndChecksLength() {
    BatchMeta meta = batch(0, 1, 2).tags(uidTags("u", 3)).build();
    BatchMeta merged =
        meta.withTagsMerged(List.of(Map.of("u", 10, "w", 1), Map.of(), Map.of("z", 3)));
    assertThat(merged.tags())
        .containsExactly(Map.of("u", 10L, "w", 1L), Map.of("u", 1L), Map.of("u", 2L, "z", 3L));
    assertThat(meta.withTagsMerged(null)).isSameAs(meta);
    assertThatThrownBy(() -> meta.withTagsMerged(List.of(Map.of("u", 1))))
        .hasMessageContaining("must match the batch size");
    assertThat(merged.withoutTags().tags()).containsExactly(Map.of(), Map.of(), Map.of());
  }

  @Test
  void K41_sampleViewShowsOwnShapeAndIsReadOnly() {
    BatchMeta meta =
        batch(4)
            .field("x", FieldSchema.nestedOf(DType.FLOAT32, List.of(shapeOf(5))))
            .tags(List.of(Map.of("k", "v")))
            .build();
    SampleView view = meta.samples().get(0);
    assertThat(view.globalIndex()).isEqualTo(4L);
    assertThat(view.partitionId()).isEqualTo("partition_0");
    assertThat(view.fields().get("x"))
        .isEqualTo(new SampleView.Field(DType.FLOAT32, shapeOf(5), true, false));
    assertThatThrownBy(() -> view.tags().put("k", "w"))
        .isInstanceOf(UnsupportedOperationException.class);
    assertThatThrownBy(() -> view.fields().remove("x"))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void K42_addFieldsMakesBatchReady() {
    BatchMeta meta = batch(0, 1, 2, 3, 4).field("a", F32_2).field("b", F32_2).build();
    BatchMeta added =
        meta.addFields(
            Map.of(
                "responses", FieldSchema.regular(DType.INT64, 128),
                "log_probs", FieldSchema.regular(DType.FLOAT32, 128)),
            true);
    assertThat(added.fieldNames()).hasSize(4);
    assertThat(added.isReady()).isTrue();
    BatchMeta notReady = meta.addFields(Map.of("c", F32_2), false);
    assertThat(notReady.isReady()).isFalse();
    assertThatThrownBy(
            () ->
                meta.addFields(
                    Map.of("n", FieldSchema.nestedOf(DType.FLOAT32, List.of(shapeOf(1)))), true))
        .hasMessageContaining("batch size is 5");
  }

  @Test
  void K43_concatOfDifferentRegularShapesBecomesNested() {
    BatchMeta a = batch(0, 1).field("x", F32_2).build();
    BatchMeta b = batch(2).field("x", FieldSchema.regular(DType.FLOAT32, 3)).build();
    FieldSchema x = BatchMeta.concat(List.of(a, b)).field("x");
    assertThat(x.nested()).isTrue();
    assertThat(x.perSampleShapes()).containsExactly(shapeOf(2), shapeOf(2), shapeOf(3));
  }

  @Test
  void shouldSkipEmptyMembersWhenConcatenating() {
    BatchMeta a = batch(0).field("x", F32_2).build();
    assertThat(BatchMeta.concat(List.of())).isSameAs(BatchMeta.empty());
    assertThat(BatchMeta.concat(List.of(BatchMeta.empty(), a))).isEqualTo(a);
  }

  @Test
  void shouldRejectNonJsonValuesInTags() {
    assertThatThrownBy(() -> batch(0).tags(List.of(Map.of("t", new Object()))).build())
        .isInstanceOf(TqException.class)
        .hasMessageContaining("not JSON-compatible");
  }

  @Test
  void shouldRejectNegativeOrNullGlobalIndexes() {
    assertThatThrownBy(() -> batch(0, -3).build())
        .hasMessageContaining("global index at position 1 is -3");
    assertThatThrownBy(() -> BatchMeta.builder().globalIndexes(java.util.Arrays.asList(1L, null)))
        .hasMessageContaining("global index at position 1 is null");
    long[] indexes = {4, 5};
    BatchMeta.Builder builder = batch(indexes);
    indexes[0] = 9;
    assertThat(builder.build().globalIndexes()).containsExactly(4L, 5L);
  }
}
