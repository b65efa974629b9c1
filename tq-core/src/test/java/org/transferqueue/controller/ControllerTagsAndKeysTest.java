package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.controller.Fixtures.F32_4;
import static org.transferqueue.controller.Fixtures.controller;
import static org.transferqueue.controller.Fixtures.ids;
import static org.transferqueue.controller.Fixtures.insert;
import static org.transferqueue.controller.Fixtures.insertProduced;
import static org.transferqueue.controller.Fixtures.produce;
import static org.transferqueue.controller.Fixtures.range;
import static org.transferqueue.controller.Fixtures.regular;
import static org.transferqueue.controller.Fixtures.schema;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.tensor.DType;

/** Scenarios 6.G (tags and backend metadata) and 6.H (key-value interface). */
class ControllerTagsAndKeysTest {
  private final Controller c = controller();

  private static ErrorCode codeOf(Throwable e) {
    return ((TqException) e).code();
  }

  private BatchMeta keys(String partition, boolean create, String... keys) {
    return c.resolveKeys(partition, List.of(keys), create);
  }

  private Map<String, Long> keyMap(String partition) {
    return c.partitionSnapshot(partition).orElseThrow().keys();
  }

  @Test
  void G1_tagsAreStoredPerSample() {
    insertProduced(c, "custom_meta_test", 3, "x");
    c.setTags(
        TagUpdate.replace(
            "custom_meta_test",
            Map.of(
                0L, Map.of("sample_score", 0.9, "quality", "high"),
                1L, Map.of("sample_score", 0.8, "quality", "medium"))));
    Map<Long, Map<String, Object>> tags = c.getTags("custom_meta_test", range(0, 3));
    assertThat(tags.keySet()).containsExactly(0L, 1L);
    assertThat(tags.get(0L)).containsEntry("quality", "high").containsEntry("sample_score", 0.9);
  }

  @Test
  void G2_tagsOfSeveralPartitionsInOneUpdate() {
    insertProduced(c, "custom_meta_test", 3, "x");
    c.setTags(
        TagUpdate.replace(
            "custom_meta_test",
            Map.of(
                0L, Map.of("sample_score", 0.9, "quality", "high"),
                1L, Map.of("sample_score", 0.8, "quality", "medium"))));
    assertThat(insertProduced(c, "custom_meta_test2", 3, "x").globalIndexes())
        .containsExactly(3L, 4L, 5L);
    Map<String, Map<Long, Map<String, Object>>> update = new LinkedHashMap<>();
    update.put(
        "custom_meta_test2",
        Map.of(
            3L, Map.of("sample_score", 1, "quality", "high"),
            4L, Map.of("sample_score", 0, "quality", "low")));
    update.put(
        "custom_meta_test",
        Map.of(
            2L, Map.of("sample_score", 0.7, "quality", "high"),
            0L, Map.of("sample_score", 0.001, "quality", "low")));
    assertThat(c.setTags(new TagUpdate(update, TagUpdate.Mode.REPLACE))).isEqualTo(4);
    Map<Long, Map<String, Object>> first = c.getTags("custom_meta_test", range(0, 3));
    assertThat(first.get(0L)).isEqualTo(Map.of("sample_score", 0.001, "quality", "low"));
    assertThat(first.get(1L)).containsEntry("sample_score", 0.8);
    assertThat(first.get(2L)).containsEntry("sample_score", 0.7);
    Map<Long, Map<String, Object>> second = c.getTags("custom_meta_test2", range(3, 6));
    assertThat(second.keySet()).containsExactly(3L, 4L);
    assertThat(second.get(4L)).containsEntry("quality", "low");
  }

  @Test
  void G3_laterWriteWinsForTheSameKeys() {
    insert(c, "p", 1, "x");
    for (TagUpdate.Mode mode : TagUpdate.Mode.values()) {
      c.setTags(new TagUpdate(Map.of("p", Map.of(0L, Map.of("score", 0.5))), mode));
      c.setTags(
          new TagUpdate(Map.of("p", Map.of(0L, Map.of("score", 0.9, "label", "updated"))), mode));
      assertThat(c.getTags("p", ids(0)).get(0L))
          .isEqualTo(Map.of("score", 0.9, "label", "updated"));
    }
  }

  @Test
  void G4_replaceReplacesWholeRecordWhileMergeKeepsOtherKeys() {
    insert(c, "p", 2, "x");
    c.setTags(TagUpdate.replace("p", Map.of(0L, Map.of("a", 1))));
    c.setTags(TagUpdate.replace("p", Map.of(0L, Map.of("b", 2))));
    assertThat(c.getTags("p", ids(0)).get(0L)).isEqualTo(Map.of("b", 2L));
    c.setTags(TagUpdate.merge("p", Map.of(1L, Map.of("a", 1))));
    c.setTags(TagUpdate.merge("p", Map.of(1L, Map.of("b", 2))));
    assertThat(c.getTags("p", ids(1)).get(1L)).isEqualTo(Map.of("a", 1L, "b", 2L));
  }

  @Test
  void G5_unknownPartitionIsSkipped() {
    insert(c, "p", 1, "x");
    Map<String, Map<Long, Map<String, Object>>> update = new LinkedHashMap<>();
    update.put("missing", Map.of(0L, Map.of("a", 1)));
    update.put("p", Map.of(0L, Map.of("a", 2)));
    assertThat(c.setTags(new TagUpdate(update, TagUpdate.Mode.MERGE))).isEqualTo(1);
    assertThat(c.getTags("p", ids(0)).get(0L)).isEqualTo(Map.of("a", 2L));
    assertThat(c.listPartitions()).containsExactly("p");
  }

  @Test
  void G6_G7_readingTagsReturnsOnlySamplesThatHaveThem() {
    insert(c, "p", 3, "x");
    c.setTags(
        TagUpdate.replace("p", Map.of(0L, Map.of("i", 0), 1L, Map.of("i", 1), 2L, Map.of("i", 2))));
    assertThat(c.getTags("p", ids(0, 2)).keySet()).containsExactly(0L, 2L);
    c.setTags(TagUpdate.replace("p", Map.of()));
    Controller fresh = controller();
    insert(fresh, "p", 3, "x");
    fresh.setTags(TagUpdate.replace("p", Map.of(0L, Map.of("i", 0))));
    assertThat(fresh.getTags("p", ids(1, 2))).isEmpty();
  }

  @Test
  void G8_G9_backendMetadataFromNotifications() {
    insert(c, "p", 3, "prompt_ids", "attention_mask");
    Map<Long, Map<String, Object>> backend = new LinkedHashMap<>();
    backend.put(0L, Map.of("prompt_ids", Map.of("token_count", 100)));
    backend.put(1L, Map.of("attention_mask", Map.of("mask_ratio", 0.2)));
    backend.put(2L, Map.of("prompt_ids", Map.of("token_count", 300)));
    c.updateProductionStatus(
        new ProductionUpdate(
            "p", range(0, 3), schema(F32_4, "prompt_ids", "attention_mask"), backend));
    Map<Long, Map<String, Object>> read =
        c.getBackendMeta("p", range(0, 3), List.of("prompt_ids", "attention_mask"));
    assertThat(read).hasSize(3);
    assertThat(read.get(0L)).isEqualTo(Map.of("prompt_ids", Map.of("token_count", 100L)));
    assertThat(read.get(1L)).isEqualTo(Map.of("attention_mask", Map.of("mask_ratio", 0.2)));
    assertThat(read.get(2L)).isEqualTo(Map.of("prompt_ids", Map.of("token_count", 300L)));
  }

  @Test
  void shouldRejectNullIndexesAsInvalidArgumentAndReadEveryFieldForNullFields() {
    insert(c, "p", 1, "f");
    c.updateProductionStatus(
        new ProductionUpdate(
            "p", range(0, 1), schema(F32_4, "f"), Map.of(0L, Map.of("f", Map.of("n", 1)))));

    assertThatThrownBy(() -> c.getTags("p", null))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThatThrownBy(() -> c.getBackendMeta("p", null, List.of("f")))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
    assertThat(c.getBackendMeta("p", range(0, 1), null))
        .isEqualTo(Map.of(0L, Map.of("f", Map.of("n", 1L))));
  }

  @Test
  void G10_tagsWithListValuesSurviveForceFetch() {
    insertProduced(c, "p", 2, "x");
    Map<String, Object> tag = Map.of("score", 0.5, "label", "a", "tags", List.of("u", "v"));
    c.setTags(TagUpdate.merge("p", Map.of(0L, tag, 1L, tag)));
    BatchMeta meta = c.getMetadata(GetMetadataRequest.forceFetch("p", List.of("x")));
    assertThat(meta.tags()).containsExactly(tag, tag);
  }

  @Test
  void shouldSkipTagsForSamplesThatAreNotActive() {
    insert(c, "a", 1, "x");
    insert(c, "b", 1, "x");
    assertThat(c.setTags(TagUpdate.merge("a", Map.of(1L, Map.of("k", 1), 7L, Map.of("k", 1)))))
        .isZero();
    assertThat(c.getTags("a", ids(1, 7))).isEmpty();
    assertThat(c.getTags("b", ids(1))).isEmpty();
    c.checkInvariants();
  }

  @Test
  void shouldRejectTagValuesThatAreNotJsonCompatible() {
    insert(c, "p", 1, "x");
    assertThatThrownBy(() -> TagUpdate.merge("p", Map.of(0L, Map.of("t", new Object()))))
        .extracting(ControllerTagsAndKeysTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }

  @Test
  void H1_createKeysAllocatesIndexes() {
    BatchMeta meta = keys("kv_test_partition", true, "key_a", "key_b", "key_c");
    assertThat(c.listPartitions()).containsExactly("kv_test_partition");
    assertThat(meta.size()).isEqualTo(3);
    Map<String, Long> map = keyMap("kv_test_partition");
    assertThat(map.get("key_a")).isEqualTo(meta.globalIndex(0));
    assertThat(map.get("key_b")).isEqualTo(meta.globalIndex(1));
    assertThat(map.get("key_c")).isEqualTo(meta.globalIndex(2));
    assertThat(c.resolveIndexes("kv_test_partition", meta.globalIndexes()))
        .containsExactly("key_a", "key_b", "key_c");
    c.checkInvariants();
  }

  @Test
  void H2_existingKeysResolveWithoutCreate() {
    keys("p", true, "a", "b");
    assertThat(keys("p", false, "a", "b").globalIndexes()).containsExactly(0L, 1L);
  }

  @Test
  void H3_missingKeysAreLeftOut() {
    keys("p", true, "existing_key_1", "existing_key_2", "existing_key_3");
    BatchMeta meta =
        keys(
            "p",
            false,
            "existing_key_1",
            "nonexistent_key",
            "existing_key_3",
            "another_missing_key");
    assertThat(meta.size()).isEqualTo(2);
    assertThat(c.resolveIndexes("p", meta.globalIndexes()))
        .containsExactly("existing_key_1", "existing_key_3");
  }

  @Test
  void H4_H5_nothingFoundGivesEmptyBatch() {
    keys("p", true, "initial_key");
    assertThat(keys("p", false, "nonexistent_key").size()).isZero();
    assertThat(keys("missing", false, "k").size()).isZero();
    assertThat(c.listPartitions()).containsExactly("p");
  }

  @Test
  void H6_producedFieldsAppearInTheSchema() {
    BatchMeta created = keys("p", true, "sample_1", "sample_2", "sample_3");
    c.updateProductionStatus(
        ProductionUpdate.of(
            "p", created.globalIndexes(), schema(regular(DType.FLOAT32, 64), "data")));
    BatchMeta meta = keys("p", false, "sample_1", "sample_2", "sample_3");
    assertThat(meta.size()).isEqualTo(3);
    assertThat(meta.fieldNames()).containsExactly("data");
    assertThat(meta.isReady()).isTrue();
  }

  @Test
  void H7_keysCarryTheirTags() {
    BatchMeta created = keys("p", true, "key_1", "key_2");
    c.setTags(
        TagUpdate.merge(
            "p",
            Map.of(
                created.globalIndex(0), Map.of("score", 0.9, "tag", "A"),
                created.globalIndex(1), Map.of("score", 0.8, "tag", "B"))));
    BatchMeta meta = keys("p", false, "key_1", "key_2");
    assertThat(meta.tags()).hasSize(2);
    assertThat(meta.tags(0)).containsEntry("score", 0.9);
    assertThat(meta.tags(1)).containsEntry("tag", "B");
  }

  @Test
  void H8_keysArePartitionScoped() {
    keys("partition_kv_1", true, "p1_key_a", "p1_key_b");
    keys("partition_kv_2", true, "p2_key_x", "p2_key_y", "p2_key_z");
    assertThat(keyMap("partition_kv_1").keySet()).containsExactly("p1_key_a", "p1_key_b");
    assertThat(keyMap("partition_kv_2").keySet())
        .containsExactly("p2_key_x", "p2_key_y", "p2_key_z");
    assertThat(keys("partition_kv_2", false, "p1_key_a").size()).isZero();
  }

  @Test
  void H9_indexesResolveToKeys() {
    keys("p", true, "test_key_a", "test_key_b", "test_key_c");
    assertThat(c.resolveIndexes("p", ids(0, 1, 2)))
        .containsExactly("test_key_a", "test_key_b", "test_key_c");
    Controller other = controller();
    other.resolveKeys("q", List.of("key_0", "key_1", "key_2", "key_3", "key_4"), true);
    assertThat(other.resolveIndexes("q", ids(0, 4))).containsExactly("key_0", "key_4");
  }

  @Test
  void H10_unknownIndexResolvesToNull() {
    keys("p", true, "existing_key");
    assertThat(c.resolveIndexes("p", ids(99))).containsExactly((String) null);
    assertThat(c.resolveIndexes("p", ids(0, 99))).containsExactly("existing_key", null);
  }

  @Test
  void H11_keysOfTwoPartitionsGetDistinctIndexes() {
    keys("partition_idx_1", true, "p1_key");
    keys("partition_idx_2", true, "p2_key");
    assertThat(c.resolveIndexes("partition_idx_1", ids(0))).containsExactly("p1_key");
    assertThat(c.resolveIndexes("partition_idx_2", ids(1))).containsExactly("p2_key");
  }

  @Test
  void H13_fieldsReportedAreThoseProducedForEverySample() {
    keys("p", true, "k1", "k2", "k3");
    produce(c, "p", ids(0, 1), "x");
    produce(c, "p", ids(0), "y");
    BatchMeta k12 = keys("p", false, "k1", "k2");
    assertThat(k12.fieldNames()).containsExactly("x");
    assertThat(k12.productionStatus()).containsExactly(true, true);
    assertThat(keys("p", false, "k1").fieldNames()).containsExactly("x", "y");
    BatchMeta all = keys("p", false, "k1", "k2", "k3");
    assertThat(all.fieldNames()).isEmpty();
    assertThat(all.productionStatus()).containsExactly(false, false, false);
  }

  @Test
  void H14_createKeepsRequestOrder() {
    keys("p", true, "k1", "k2", "k3");
    assertThat(keys("p", true, "k2", "new1", "k1", "new2").globalIndexes())
        .containsExactly(1L, 3L, 0L, 4L);
    c.checkInvariants();
  }

  @Test
  void H15_duplicateKeysAreRejectedBeforeAnythingIsRegistered() {
    assertThatThrownBy(() -> keys("p", true, "a", "a"))
        .extracting(ControllerTagsAndKeysTest::codeOf)
        .isEqualTo(ErrorCode.DUPLICATE_KEY);
    assertThat(c.listPartitions()).isEmpty();
    assertThat(c.statistics().allocatedIndexes()).isZero();
  }

  @Test
  void H16_listKeysWithTags() {
    BatchMeta created = keys("p", true, "a", "b");
    c.setTags(TagUpdate.merge("p", Map.of(created.globalIndex(0), Map.of("t", 1))));
    KvListing all = c.listKeys(null);
    assertThat(all.message()).isEqualTo("success");
    assertThat(all.partitions())
        .isEqualTo(Map.of("p", Map.of("a", Map.of("t", 1L), "b", Map.of())));
    KvListing missing = c.listKeys("missing");
    assertThat(missing.partitions()).isEmpty();
    assertThat(missing.message()).isEqualTo("partition missing does not exist");
  }

  @Test
  void H17_unknownPartitionResolvesToNoKeys() {
    assertThat(c.resolveIndexes("missing", ids(0))).isEmpty();
  }

  @Test
  void H18_clearedKeyCanBeRecreatedWithRecycledIndex() {
    keys("p", true, "k1");
    c.clearSamples(ClearSamplesRequest.of("p", ids(0)));
    assertThat(keys("p", false, "k1").size()).isZero();
    assertThat(keys("p", true, "k1").globalIndexes()).containsExactly(0L);
    c.checkInvariants();
  }

  @Test
  void H19_malformedKeyRequestsAreRejected() {
    assertThatThrownBy(() -> c.resolveKeys("p", List.of(), true))
        .extracting(ControllerTagsAndKeysTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThatThrownBy(() -> c.resolveKeys("p", Arrays.asList("a", null), true))
        .extracting(ControllerTagsAndKeysTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThatThrownBy(() -> c.resolveIndexes("p", List.of()))
        .extracting(ControllerTagsAndKeysTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(c.listPartitions()).isEmpty();
  }

  @Test
  void H20_allKeysMissingGivesPlainEmptyBatch() {
    keys("p", true, "a");
    produce(c, "p", ids(0), "x");
    BatchMeta meta = keys("p", false, "b");
    assertThat(meta.size()).isZero();
    assertThat(meta.fieldNames()).isEmpty();
  }

  @Test
  void shouldReportCreatedSamplesWhenResolvingKeysForPut() {
    keys("p", true, "a");
    produce(c, "p", ids(0), "x");
    KeyResolution resolution =
        c.resolveKeysForPut("p", List.of("b", "a", "c"), schema(F32_4, "x"), 3);
    assertThat(resolution.meta()).isEqualTo(keys("p", false, "b", "a", "c"));
    assertThat(resolution.createdIndexes()).containsExactly(1L, 2L);
    assertThat(keyMap("p")).containsOnlyKeys("a", "b", "c");
    KeyResolution again = c.resolveKeysForPut("p", List.of("a", "c"), Map.of(), 2);
    assertThat(again.createdIndexes()).isEmpty();
    assertThat(again.meta().globalIndexes()).containsExactly(0L, 2L);
  }

  @Test
  void shouldCreateNothingWhenThePutSchemaConflicts() {
    keys("p", true, "a");
    produce(c, "p", ids(0), "x");
    assertThatThrownBy(
            () ->
                c.resolveKeysForPut(
                    "p", List.of("a", "new"), schema(regular(DType.INT8, 4), "x"), 2))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
    assertThat(keyMap("p")).containsOnlyKeys("a");
    assertThatThrownBy(() -> c.resolveKeysForPut("p", List.of("n", "n"), Map.of(), 2))
        .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.DUPLICATE_KEY));
    assertThat(keyMap("p")).containsOnlyKeys("a");
  }
}
