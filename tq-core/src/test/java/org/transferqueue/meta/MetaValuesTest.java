package org.transferqueue.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/** Metadata values (tags, extra info, backend metadata) hold valid Unicode strings only. */
class MetaValuesTest {
  private static void assertRefused(Supplier<?> call, String what, String escaped) {
    assertThatThrownBy(call::get)
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageStartingWith(what + " ")
        .hasMessageContaining(escaped)
        .hasMessageContaining("is not valid Unicode");
  }

  @Test
  void shouldRefuseTagsAndExtraInfoWithALoneSurrogateInAKeyOrValueWhenSet() {
    BatchMeta meta = BatchMeta.builder().globalIndexes(0, 1).partitionId("p").build();
    assertRefused(
        () -> meta.withTags(List.of(Map.of("status", "run\uD800"), Map.of())),
        "metadata value of key \"status\"",
        "\"run\\uD800\"");
    assertRefused(
        () ->
            meta.withTagsMerged(
                List.of(Map.of(), Map.of("s", List.of("ok", Map.of("x", "\uDC00"))))),
        "metadata value of key \"x\"",
        "lone surrogate \\uDC00 at index 0");
    assertRefused(
        () -> meta.withTags(List.of(Map.of("k\uDBFF", 1L), Map.of())),
        "metadata map key",
        "\"k\\uDBFF\"");
    assertRefused(() -> meta.withExtraInfo("note", "\uD800"), "metadata value", "\"\\uD800\"");
    assertRefused(() -> meta.withExtraInfo("n\uDFFF", 1L), "metadata map key", "\"n\\uDFFF\"");
    assertRefused(
        () -> meta.withExtraInfo(Map.of("note", List.of("\uD800"))),
        "metadata value of key \"note\"",
        "\\uD800");
    assertRefused(() -> meta.withBackendMeta(0, "u\uD800", 1L), "metadata map key", "\\uD800");
    assertRefused(
        () -> KvBatchMeta.of(List.of("a"), List.of(Map.of("t", "\uDC00x")), "p", null),
        "metadata value of key \"t\"",
        "\"\\uDC00x\"");
  }

  @Test
  void shouldKeepSurrogatePairsAndReplacementCharactersExactly() {
    Map<String, Object> tags = Map.of("emoji \uD83D\uDE00", List.of("\uFFFD", "\uD83C\uDF0D"));
    assertThat(MetaValues.freezeMap(tags)).isEqualTo(tags);
  }
}
