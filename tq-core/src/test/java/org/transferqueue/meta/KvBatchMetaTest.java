package org.transferqueue.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

class KvBatchMetaTest {

  private static List<String> keys(int n) {
    return IntStream.range(0, n).mapToObj(i -> "key" + i).toList();
  }

  private static List<Map<String, Object>> idx(int n) {
    return IntStream.range(0, n).mapToObj(i -> Map.<String, Object>of("idx", (long) i)).toList();
  }

  private static KvBatchMeta three() {
    return new KvBatchMeta(
        List.of("key1", "key2", "key3"),
        idx(3),
        "partition_0",
        List.of("field1", "field2"),
        Map.of("test", "value"));
  }

  private static ErrorCode code(Throwable t) {
    return ((TqException) t).code();
  }

  @Test
  void L1_constructionKeepsComponents() {
    KvBatchMeta meta =
        KvBatchMeta.of(
            List.of("key1", "key2", "key3"), idx(3), "partition_0", List.of("field1", "field2"));
    assertThat(meta.size()).isEqualTo(3);
    assertThat(meta.keys()).containsExactly("key1", "key2", "key3");
    assertThat(meta.partitionId()).isEqualTo("partition_0");
    assertThat(meta.fields()).containsExactly("field1", "field2");
    assertThat(meta.extraInfo()).isEmpty();
  }

  @Test
  void L2_defaultIsEmpty() {
    KvBatchMeta meta = new KvBatchMeta(null, null, null, null, null);
    assertThat(meta.size()).isZero();
    assertThat(meta.keys()).isEmpty();
    assertThat(meta.tags()).isEmpty();
    assertThat(meta.partitionId()).isNull();
    assertThat(meta.fields()).isNull();
    assertThat(meta).isEqualTo(KvBatchMeta.empty());
  }

  @Test
  void L3_keysAndTagsMustAlign() {
    assertThatThrownBy(() -> KvBatchMeta.of(List.of("a", "b"), idx(1), "p", null))
        .hasMessageContaining("keys and tags must have same length")
        .satisfies(t -> assertThat(code(t)).isEqualTo(ErrorCode.SHAPE_MISMATCH));
  }

  @Test
  void L4_duplicateKeysRejected() {
    assertThatThrownBy(() -> KvBatchMeta.of(List.of("key1", "key1"), idx(2), "p", null))
        .hasMessageContaining("Got duplicated keys")
        .satisfies(t -> assertThat(code(t)).isEqualTo(ErrorCode.DUPLICATE_KEY));
  }

  @Test
  void L5_duplicateFieldsRejected() {
    assertThatThrownBy(() -> KvBatchMeta.of(List.of("k"), idx(1), "p", List.of("field1", "field1")))
        .hasMessageContaining("Got duplicated fields");
  }

  @Test
  void L6_selectKeysKeepsBatchAttributes() {
    KvBatchMeta selected = three().selectKeys(List.of("key1", "key3"));
    assertThat(selected.keys()).containsExactly("key1", "key3");
    assertThat(selected.tags()).containsExactly(Map.of("idx", 0L), Map.of("idx", 2L));
    assertThat(selected.partitionId()).isEqualTo("partition_0");
    assertThat(selected.fields()).containsExactly("field1", "field2");
    assertThat(selected.extraInfo()).isEqualTo(Map.of("test", "value"));
    assertThat(three().selectKeys(List.of()).size()).isZero();
  }

  @Test
  void L7_selectKeysRejectsDuplicates() {
    assertThatThrownBy(() -> three().selectKeys(List.of("key1", "key1")))
        .hasMessageContaining("Contain duplicate keys");
  }

  @Test
  void L8_selectKeysRejectsUnknownKeys() {
    assertThatThrownBy(() -> three().selectKeys(List.of("key1", "nonexistent")))
        .hasMessageContaining("not found in current batch")
        .hasMessageContaining("nonexistent")
        .satisfies(t -> assertThat(code(t)).isEqualTo(ErrorCode.UNKNOWN_KEY));
  }

  @Test
  void L9_reorderPermutesKeysAndTags() {
    KvBatchMeta r = three().reorder(2, 0, 1);
    assertThat(r.keys()).containsExactly("key3", "key1", "key2");
    assertThat(r.tags()).containsExactly(Map.of("idx", 2L), Map.of("idx", 0L), Map.of("idx", 1L));
  }

  @Test
  void L10_reorderRejectsWrongLength() {
    assertThatThrownBy(() -> three().reorder(0, 1)).hasMessageContaining("does not match");
  }

  @Test
  void L11_reorderRejectsDuplicates() {
    assertThatThrownBy(() -> three().reorder(0, 0, 1))
        .hasMessageContaining("duplicates")
        .satisfies(t -> assertThat(code(t)).isEqualTo(ErrorCode.DUPLICATE_KEY));
  }

  @Test
  void L12_chunkKeepsBatchAttributes() {
    KvBatchMeta meta =
        new KvBatchMeta(
            keys(10), idx(10), "partition_0", List.of("field1"), Map.of("test", "value"));
    List<KvBatchMeta> chunks = meta.chunk(3);
    assertThat(chunks).extracting(KvBatchMeta::size).containsExactly(4, 3, 3);
    assertThat(chunks.get(0).keys()).containsExactly("key0", "key1", "key2", "key3");
    assertThat(chunks.get(0).tags()).isEqualTo(idx(4));
    assertThat(chunks.get(1).keys()).containsExactly("key4", "key5", "key6");
    assertThat(chunks)
        .allSatisfy(
            c -> {
              assertThat(c.partitionId()).isEqualTo("partition_0");
              assertThat(c.fields()).containsExactly("field1");
              assertThat(c.extraInfo()).isEqualTo(Map.of("test", "value"));
            });
    assertThatThrownBy(() -> meta.chunk(0)).isInstanceOf(TqException.class);
  }

  @Test
  void L13_chunkMoreThanSizeGivesEmptyChunks() {
    KvBatchMeta meta = KvBatchMeta.of(keys(2), idx(2), "p", null);
    assertThat(meta.chunk(5)).extracting(KvBatchMeta::size).containsExactly(1, 1, 0, 0, 0);
  }

  @Test
  void L14_concatAppendsInOrder() {
    KvBatchMeta a =
        new KvBatchMeta(
            List.of("key0", "key1"),
            idx(2),
            "partition_0",
            List.of("field1"),
            Map.of("test", "value1"));
    KvBatchMeta b =
        new KvBatchMeta(
            List.of("key2", "key3"),
            List.of(Map.of("idx", 2), Map.of("idx", 3)),
            "partition_0",
            List.of("field1"),
            Map.of("test", "value1"));
    KvBatchMeta c = KvBatchMeta.concat(List.of(a, b));
    assertThat(c.size()).isEqualTo(4);
    assertThat(c.keys()).containsExactly("key0", "key1", "key2", "key3");
    assertThat(c.tags()).isEqualTo(idx(4));
    assertThat(c.partitionId()).isEqualTo("partition_0");
    assertThat(c.fields()).containsExactly("field1");
    assertThat(c.extraInfo()).isEqualTo(Map.of("test", "value1"));
  }

  @Test
  void L15_concatSkipsEmptyMembers() {
    KvBatchMeta one = KvBatchMeta.of(List.of("key0"), idx(1), "p", null);
    KvBatchMeta c = KvBatchMeta.concat(List.of(KvBatchMeta.empty(), one, KvBatchMeta.empty()));
    assertThat(c.keys()).containsExactly("key0");
  }

  @Test
  void L16_concatRejectsDifferentFields() {
    KvBatchMeta a = KvBatchMeta.of(List.of("a"), idx(1), "p", List.of("field1"));
    KvBatchMeta b = KvBatchMeta.of(List.of("b"), idx(1), "p", List.of("field2"));
    assertThatThrownBy(() -> KvBatchMeta.concat(List.of(a, b)))
        .hasMessageContaining("Field names do not match");
  }

  @Test
  void L17_concatRejectsDifferentPartitions() {
    KvBatchMeta a = KvBatchMeta.of(List.of("a"), idx(1), "partition_0", null);
    KvBatchMeta b = KvBatchMeta.of(List.of("b"), idx(1), "partition_1", null);
    assertThatThrownBy(() -> KvBatchMeta.concat(List.of(a, b)))
        .hasMessageContaining("Partition do not match");
  }

  @Test
  void L18_concatOfNothingIsEmpty() {
    KvBatchMeta c = KvBatchMeta.concat(List.of());
    assertThat(c.size()).isZero();
    assertThat(c.keys()).isEmpty();
    assertThat(c.tags()).isEmpty();
    assertThat(c.extraInfo()).isEmpty();
  }

  @Test
  void L19_tagsAreDeepCopies() {
    List<Object> nested = new ArrayList<>(List.of(1));
    Map<String, Object> tag = new HashMap<>(Map.of("list", nested));
    KvBatchMeta meta = KvBatchMeta.of(List.of("k"), List.of(tag), "p", null);
    nested.add(2);
    tag.put("other", 3);
    assertThat(meta.tags().getFirst()).isEqualTo(Map.of("list", List.of(1L)));
    assertThatThrownBy(() -> ((List<?>) meta.tags().getFirst().get("list")).clear())
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void L20_extraInfoIsDeepCopy() {
    Map<String, Object> inner = new HashMap<>(Map.of("lr", 0.1));
    Map<String, Object> info = new HashMap<>(Map.of("config", inner));
    KvBatchMeta meta = new KvBatchMeta(List.of(), List.of(), "p", null, info);
    inner.put("lr", 0.2);
    assertThat(meta.extraInfo()).isEqualTo(Map.of("config", Map.of("lr", 0.1)));
  }

  @Test
  void L21_concatRejectsConflictingExtraInfo() {
    KvBatchMeta a = new KvBatchMeta(List.of("a"), idx(1), "p", null, Map.of("step", 1));
    KvBatchMeta b = new KvBatchMeta(List.of("b"), idx(1), "p", null, Map.of("step", 2));
    assertThatThrownBy(() -> KvBatchMeta.concat(List.of(a, b))).hasMessageContaining("conflicting");
  }

  @Test
  void L22_reorderRejectsNegativePositions() {
    assertThatThrownBy(() -> three().reorder(-1, 0, 1))
        .hasMessageContaining("must be in range")
        .satisfies(t -> assertThat(code(t)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
  }

  @Test
  void L23_concatFieldSetRules() {
    KvBatchMeta none = KvBatchMeta.of(List.of("a"), idx(1), "p", null);
    KvBatchMeta x = KvBatchMeta.of(List.of("b"), idx(1), "p", List.of("x"));
    assertThatThrownBy(() -> KvBatchMeta.concat(List.of(none, x)))
        .hasMessageContaining("Field names do not match");
    assertThat(KvBatchMeta.concat(List.of(x, none)).fields()).containsExactly("x");
    KvBatchMeta xy = KvBatchMeta.of(List.of("c"), idx(1), "p", List.of("x", "y"));
    KvBatchMeta yx = KvBatchMeta.of(List.of("d"), idx(1), "p", List.of("y", "x"));
    assertThat(KvBatchMeta.concat(List.of(xy, yx)).fields()).containsExactly("x", "y");
  }

  @Test
  void L24_selectKeysFollowsRequestedOrder() {
    KvBatchMeta meta =
        KvBatchMeta.of(
            List.of("a", "b", "c"),
            List.of(Map.of("i", 0), Map.of("i", 1), Map.of("i", 2)),
            "p",
            null);
    assertThat(meta.selectKeys(List.of("c", "a")).tags())
        .containsExactly(Map.of("i", 2L), Map.of("i", 0L));
  }

  @Test
  void shouldRejectDuplicateKeysAcrossConcatenatedMembers() {
    KvBatchMeta a = KvBatchMeta.of(List.of("a"), idx(1), "p", null);
    assertThatThrownBy(() -> KvBatchMeta.concat(List.of(a, a)))
        .hasMessageContaining("Got duplicated keys");
  }

  @Test
  void shouldReplaceFieldsAndTagsAsNewValues() {
    KvBatchMeta meta = three();
    KvBatchMeta other = meta.withFields(List.of("z")).withTags(idx(3).reversed());
    assertThat(other.fields()).containsExactly("z");
    assertThat(other.tags().getFirst()).isEqualTo(Map.of("idx", 2L));
    assertThat(meta.fields()).containsExactly("field1", "field2");
  }
}
