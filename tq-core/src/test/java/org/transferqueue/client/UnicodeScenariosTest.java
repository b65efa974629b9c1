package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.testing.Seeds;

/**
 * Strings must be valid Unicode (docs/PROTOCOL.md, conventions): a string with a lone surrogate,
 * which UTF-8 cannot encode, is refused with {@code INVALID_ARGUMENT} naming what it was, before
 * anything is stored or sent, on every backend and deployment (it used to be stored as {@code ?}
 * over TCP and on MooncakeStore, and exactly on embedded SimpleStorage); every valid string,
 * surrogate pairs and U+FFFD included, reads back exactly.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class UnicodeScenariosTest {
  @Parameter Deployment deployment;

  private static final String P = "unicode";

  /** Refused with INVALID_ARGUMENT; the message names {@code what} and shows {@code shown}. */
  private static void assertRefused(ThrowingCallable call, String what, String shown) {
    assertThatThrownBy(call)
        .as("%s %s", what, shown)
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining(what)
        .hasMessageContaining(shown)
        .hasMessageContaining("is not valid Unicode: lone surrogate")
        .satisfies(e -> assertThat(Strings.loneSurrogate(e.getMessage())).isEqualTo(-1));
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRefuseALoneSurrogateInEveryNameBeforeAnythingIsStored(
      Backend backend, BufferAllocator allocator) {
    String partition = "p\uD800x";
    String shownPartition = "\"p\\uD800x\" is not valid Unicode: lone surrogate \\uD800 at index 1";
    try (TestSystem tq = deployment.fresh(backend);
        Batch row = batch("x", i64(allocator, new long[] {1}));
        Batch badField = batch("f\uDC00", i64(allocator, new long[] {1}))) {
      MetaClient client = tq.client();
      KvApi kv = tq.kv();
      assertThat(client.getPartitionList()).isEmpty(); // connects: buffers are not stored data
      long baseline = tq.storedBytes();
      assertRefused(() -> client.put(row, partition), "partition_id", shownPartition);
      assertRefused(() -> kv.put("k", partition, Map.of("v", 1L), null), "partition_id", "\\uD800");
      assertRefused(() -> kv.put("k", partition, row, null), "partition_id", "\\uD800");
      assertRefused(() -> kv.batchGet(List.of("k"), partition, null), "partition_id", "\\uD800");
      assertRefused(() -> kv.clear(List.of("k"), partition), "partition_id", "\\uD800");
      assertRefused(() -> kv.list(partition), "partition_id", "\\uD800");
      assertRefused(
          () -> client.getMeta(GetMetadataRequest.fetch(partition, List.of("x"), "t", 1)),
          "partition_id",
          "\\uD800");
      assertRefused(
          () -> client.getProductionStatus(partition, List.of("x")), "partition_id", "\\uD800");
      assertRefused(() -> client.clearPartition(partition), "partition_id", "\\uD800");
      assertRefused(() -> tq.controller().createPartition(partition), "partition_id", "\\uD800");

      assertRefused(
          () -> kv.put("k\uDC00", P, Map.of("v", 1L), null),
          "key",
          "\"k\\uDC00\" is not valid Unicode: lone surrogate \\uDC00 at index 1");
      assertRefused(
          () -> kv.batchPut(List.of("a", "\uDBFF"), P, null, List.of(Map.of(), Map.of("t", 1L))),
          "keys [\"a\", \"\\uDBFF\"]: key at position 1",
          "\\uDBFF at index 0");
      assertRefused(() -> kv.batchGet(List.of("\uDFFF"), P, null), "key at position 0", "\\uDFFF");
      assertRefused(() -> client.resolveKeys(P, List.of("\uD800"), true), "key", "\\uD800");

      assertRefused(() -> client.put(badField, P), "field name at position 0", "\"f\\uDC00\"");
      assertRefused(() -> kv.put("k", P, badField, null), "field name", "\\uDC00 at index 1");
      assertRefused(
          () -> kv.batchGet(List.of("k"), P, List.of("x\uD800")), "field name", "\\uD800");
      assertRefused(
          () -> client.getMeta(GetMetadataRequest.fetch(P, List.of("x\uD800"), "t", 1)),
          "field name",
          "\\uD800");

      assertRefused(
          () -> client.getMeta(GetMetadataRequest.fetch(P, List.of("x"), "t\uD800", 1)),
          "task_name",
          "\"t\\uD800\"");
      assertRefused(() -> client.getConsumptionStatus(P, "t\uDC00"), "task_name", "\\uDC00");
      assertRefused(() -> client.resetConsumption(P, "t\uDC00"), "task_name", "\\uDC00");

      assertThat(client.getPartitionList()).isEmpty();
      assertThat(tq.storedBytes()).as("nothing was stored").isEqualTo(baseline);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRefuseALoneSurrogateInTagsExtraInfoAndObjectValuesAndKeepWhatIsStored(
      Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend)) {
      KvApi kv = tq.kv();
      kv.put("good", P, Map.of("note", "fine \uD83D\uDE00"), Map.of("status", "ok"));

      assertRefused(
          () -> kv.put("k", P, Map.of("note", "v\uD800"), null),
          "field \"note\": object value of row 0: string",
          "\"v\\uD800\" is not valid Unicode: lone surrogate \\uD800 at index 1");
      assertRefused(
          () -> kv.put("k", P, Map.of("note", List.of("a", Map.of("b", "\uDC00"))), null),
          "object value of row 0",
          "\"\\uDC00\"");
      assertRefused(
          () -> kv.put("k", P, Map.of("note", Map.of("key\uDBFF", 1L)), null),
          "object value of row 0",
          "\"key\\uDBFF\"");
      assertRefused(
          () -> kv.put("good", P, Map.of("note", "x"), Map.of("status", "run\uD800")),
          "metadata value of key \"status\"",
          "\"run\\uD800\"");
      assertRefused(
          () -> kv.put("good", P, (Batch) null, Map.of("s\uDFFF", 1L)),
          "metadata map key",
          "\"s\\uDFFF\"");
      assertRefused(
          () ->
              kv.batchPut(
                  List.of("good", "k"), P, null, List.of(Map.of(), Map.of("t", List.of("\uD800")))),
          "metadata value of key \"t\"",
          "\\uD800");
      assertRefused(
          () -> {
            try (Batch objects = Batch.builder().objects("note", List.of("\uD800")).build()) {
              tq.client().put(objects, P);
            }
          },
          "field \"note\"",
          "\\uD800");
      BatchMeta stored = tq.client().resolveKeys(P, List.of("good"), false);
      assertRefused(
          () -> tq.client().setTags(stored.withTags(List.of(Map.of("t", "\uDC00")))),
          "metadata value",
          "\\uDC00");
      assertRefused(() -> stored.withExtraInfo("note", "\uD800"), "metadata value", "\\uD800");

      assertThat(kv.list(null)).isEqualTo(Map.of(P, Map.of("good", Map.of("status", "ok"))));
      try (Batch read = kv.batchGet(List.of("good"), P, null)) {
        assertThat(((ObjectColumn) read.column("note")).values())
            .containsExactly("fine \uD83D\uDE00");
      }
    }
  }

  /** Chars that UTF-8 and the codecs treat differently; pairs are added whole, never split. */
  private static final String[] UNITS = {
    "a",
    "Z",
    "0",
    " ",
    "\"",
    "\\",
    "é",
    "\u00FF",
    "你",
    "\uFFFD",
    "\uFFFF",
    "\u0000",
    "\n",
    "\uD83D\uDE00",
    "\uD800\uDC00",
    "\uDBFF\uDFFF"
  };

  private static String validString(Random random, int maxUnits) {
    StringBuilder out = new StringBuilder();
    for (int i = random.nextInt(maxUnits + 1); i > 0; i--) {
      out.append(UNITS[random.nextInt(UNITS.length)]);
    }
    return out.toString();
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRoundTripEveryValidStringExactlyWhenStringsAreRandom(
      Backend backend, BufferAllocator allocator) {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    try (TestSystem tq = deployment.fresh(backend)) {
      KvApi kv = tq.kv();
      String partition = "p" + validString(random, 6);
      String field = "f" + validString(random, 6);
      List<String> keys = new ArrayList<>();
      List<Object> values = new ArrayList<>();
      List<Map<String, Object>> tags = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        // The separator keeps keys distinct: "k1" + "0..." never equals "k10" + "...".
        keys.add("k" + i + "/" + validString(random, 6));
        Map<String, Object> nested = new LinkedHashMap<>();
        nested.put(validString(random, 4), List.of(validString(random, 8), validString(random, 3)));
        values.add(random.nextBoolean() ? validString(random, 40) : nested);
        tags.add(Map.of("t" + validString(random, 3), validString(random, 10)));
      }
      try (Batch rows = Batch.builder().objects(field, values).build()) {
        kv.batchPut(keys, partition, rows, tags);
      }
      Map<String, Map<String, Object>> expectedKeys = new LinkedHashMap<>();
      for (int i = 0; i < keys.size(); i++) {
        expectedKeys.put(keys.get(i), tags.get(i));
      }
      assertThat(tq.client().getPartitionList()).as("seed=%d", seed).containsExactly(partition);
      assertThat(kv.list(partition)).as("seed=%d", seed).isEqualTo(Map.of(partition, expectedKeys));
      try (Batch read = kv.batchGet(keys, partition, List.of(field))) {
        assertThat(((ObjectColumn) read.column(field)).values())
            .as("seed=%d", seed)
            .isEqualTo(values);
      }
      // The same strings with one half of a pair cut off are refused, and change nothing.
      String broken = "\uD83D\uDE00".substring(random.nextInt(2), 1 + random.nextInt(1, 2));
      String lone = validString(random, 3) + broken.charAt(0) + validString(random, 3);
      assertThatThrownBy(() -> kv.put(keys.getFirst(), partition, Map.of(field, lone), null))
          .as("seed=%d value=%s", seed, Strings.quote(lone))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
      assertThat(kv.list(partition)).as("seed=%d", seed).isEqualTo(Map.of(partition, expectedKeys));
    }
  }
}
