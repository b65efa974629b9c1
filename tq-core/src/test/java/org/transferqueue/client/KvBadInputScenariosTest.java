package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.transferqueue.client.Rows.batch;
import static org.transferqueue.client.Rows.i64;
import static org.transferqueue.client.Rows.longRows;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Client-api §4 B44-B49: argument errors, key validation, duplicates, capacity and data parsers,
 * each in the blocking and the asynchronous form. Every rejected call leaves no key behind.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class KvBadInputScenariosTest {
  @Parameter Deployment deployment;

  private static final String P = "bad_input";

  static ErrorCode code(Throwable error) {
    return ((TqException) error).code();
  }

  /** An argument error: invalid argument, or a row or tag count that does not fit the keys. */
  static void assertArgumentError(Throwable error) {
    assertThat(error).isInstanceOf(TqException.class);
    assertThat(code(error)).isIn(ErrorCode.INVALID_ARGUMENT, ErrorCode.SHAPE_MISMATCH);
  }

  private static void assertNoKeys(KvCalls kv) {
    assertThat(kv.list(P).getOrDefault(P, Map.of())).isEmpty();
  }

  @ParameterizedTest
  @EnumSource(KvCalls.Form.class)
  void B44_argumentErrorsHaveNoSideEffects(KvCalls.Form form, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh();
        Batch three = batch("x", i64(allocator, new long[] {1}, new long[] {2}, new long[] {3}));
        Batch two = batch("x", i64(allocator, new long[] {1}, new long[] {2}));
        JaggedColumn ragged = Rows.jaggedF32(allocator, new float[] {1}, new float[] {2, 3})) {
      KvCalls kv = form.over(tq.kv());
      List<String> ab = List.of("a", "b");

      assertThatThrownBy(() -> kv.put("k", P, (Map<String, ?>) null, null))
          .satisfies(KvBadInputScenariosTest::assertArgumentError);
      assertThatThrownBy(() -> kv.batchPut(ab, P, null, null))
          .satisfies(KvBadInputScenariosTest::assertArgumentError);
      assertThatThrownBy(() -> kv.batchPut(ab, P, three, null))
          .satisfies(KvBadInputScenariosTest::assertArgumentError)
          .hasMessageContaining("2")
          .hasMessageContaining("3");
      assertThatThrownBy(() -> kv.batchPut(ab, P, two, List.of(Map.of())))
          .satisfies(KvBadInputScenariosTest::assertArgumentError);
      assertThatThrownBy(() -> kv.put("k", P, Map.of("x", ragged), null))
          .satisfies(KvBadInputScenariosTest::assertArgumentError)
          .hasMessageContaining("batchPut");
      assertThatThrownBy(() -> kv.put("k", P, Map.of("x", new StringBuilder("no")), null))
          .satisfies(KvBadInputScenariosTest::assertArgumentError);
      assertThatThrownBy(() -> kv.put("k", P, two, null))
          .satisfies(KvBadInputScenariosTest::assertArgumentError)
          .hasMessageContaining("2");
      assertNoKeys(kv);
      assertThat(tq.client().getPartitionList()).doesNotContain(P);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  @ParameterizedTest
  @EnumSource(KvCalls.Form.class)
  void B45_keyArgumentValidation(KvCalls.Form form, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh();
        Batch one = batch("x", i64(allocator, new long[] {1}))) {
      KvCalls kv = form.over(tq.kv());
      List notString = List.of(123);
      List mixed = List.of("valid_key", 123);
      List<String> withNull = new ArrayList<>();
      withNull.add(null);
      List<List<String>> cases = new ArrayList<>();
      cases.add(notString);
      cases.add(mixed);
      cases.add(withNull);
      for (List<String> keys : cases) {
        assertThatThrownBy(() -> kv.batchPut(keys, P, null, List.of(Map.of("t", 1L))))
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        assertThatThrownBy(() -> kv.batchGet(keys, P))
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
        assertThatThrownBy(() -> kv.clear(keys, P))
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
      }
      assertThatThrownBy(() -> kv.batchPut(List.of(), P, one, null))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("Received an empty list as keys");
      assertThatThrownBy(() -> kv.batchGet(List.of(), P))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("Received an empty list as keys");
      assertThatThrownBy(() -> kv.clear(List.of(), P))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("Received an empty list as keys");
      // A key names a sample: the empty string names none, wherever it stands in the list.
      for (List<String> keys : List.of(List.of(""), List.of("valid_key", ""))) {
        String index = "key at position " + keys.indexOf("") + " is empty";
        assertThatThrownBy(() -> kv.batchPut(keys, P, null, List.of(Map.of("t", 1L))))
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
            .hasMessageContaining(index);
        assertThatThrownBy(() -> kv.batchGet(keys, P))
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
            .hasMessageContaining(index);
        assertThatThrownBy(() -> kv.clear(keys, P))
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
            .hasMessageContaining(index);
      }
      assertThatThrownBy(() -> kv.put("", P, one, null))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("empty");
      assertThatThrownBy(() -> kv.put("", P, (Batch) null, Map.of("t", 1L)))
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT));
      assertThat(tq.client().getPartitionList()).isEmpty();
    }
  }

  @ParameterizedTest
  @MethodSource("org.transferqueue.client.Backend#withKvForms")
  void shouldRefuseEmptyAndNullKeysWhenAnyKeyValueCallGetsThem(
      KvCalls.Form form, Backend backend, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(backend);
        Batch one = batch("x", i64(allocator, new long[] {1}));
        Batch two = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
      KvCalls kv = form.over(tq.kv());
      List<String> withNull = new ArrayList<>(List.of("b"));
      withNull.add(null);
      // A single key: the value-map put used to register an empty key nothing could read or clear.
      assertKeyRefused(() -> kv.put("", P, Map.of("x", 1L), null), "key is empty");
      assertKeyRefused(() -> kv.put("", P, Map.of("x", 1L), Map.of("t", 1L)), "key is empty");
      assertKeyRefused(() -> kv.put(null, P, Map.of("x", 1L), null), "key is null");
      assertKeyRefused(() -> kv.put(null, P, one, null), "key is null");
      assertKeyRefused(() -> kv.put(null, P, (Batch) null, Map.of("t", 1L)), "key is null");
      // Key lists name the position of the bad key, quoting keys so that an empty one shows.
      assertKeyRefused(
          () -> kv.batchPut(List.of("", "b"), P, two, null),
          "keys [\"\", \"b\"]: key at position 0 is empty");
      assertKeyRefused(
          () -> kv.batchPut(withNull, P, two, null),
          "keys [\"b\", null]: key at position 1 is null");
      assertKeyRefused(
          () -> kv.batchGet(List.of("b", ""), P), "keys [\"b\", \"\"]: key at position 1 is empty");
      assertKeyRefused(
          () -> kv.get(KvBatchMeta.of(List.of(""), List.of(Map.of()), P, null), null),
          "keys [\"\"]: key at position 0 is empty");
      assertKeyRefused(() -> kv.clear(withNull, P), "key at position 1 is null");
      assertKeyRefused(() -> kv.clear(List.of(""), P), "keys [\"\"]: key at position 0 is empty");
      // The low-level key calls and the controller refuse them too.
      assertKeyRefused(
          () -> tq.client().resolveKeys(P, List.of("a", ""), true), "key at position 1 is empty");
      assertKeyRefused(
          () -> tq.client().putKeys(P, List.of("", "b"), two, null), "key at position 0 is empty");
      assertKeyRefused(() -> tq.client().resolveKeys(P, null, false), "keys must be a list");
      assertKeyRefused(
          () -> tq.controller().resolveKeys(P, List.of(""), true), "key at position 0 is empty");
      assertNoKeys(kv);
      assertThat(tq.client().getPartitionList()).isEmpty();
    }
  }

  private static void assertKeyRefused(ThrowingCallable call, String message) {
    assertThatThrownBy(call)
        .as(message)
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining(message);
  }

  @ParameterizedTest
  @EnumSource(KvCalls.Form.class)
  void B45_fieldNamesThatCollideWithStorageKeysAreRejectedOnEveryBackend(
      KvCalls.Form form, BufferAllocator allocator) {
    for (Backend backend : Backend.values()) {
      try (TestSystem tq = deployment.fresh(backend);
          Batch at = batch("a@b", i64(allocator, new long[] {1}));
          Batch chunk = batch("a:c0", i64(allocator, new long[] {1}))) {
        KvCalls kv = form.over(tq.kv());
        for (Batch row : List.of(at, chunk)) {
          String field = row.fields().get(0);
          assertThatThrownBy(() -> kv.put("k", P, row, null))
              .as("%s on %s", field, backend)
              .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
              .hasMessageContaining(field);
          assertThatThrownBy(() -> tq.client().put(row, P))
              .as("%s on %s", field, backend)
              .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
              .hasMessageContaining(field);
        }
        assertThat(tq.client().getPartitionList()).as("%s", backend).isEmpty();
      }
    }
  }

  @ParameterizedTest
  @EnumSource(KvCalls.Form.class)
  void B46_duplicateKeysWriteNothing(KvCalls.Form form, BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh();
        Batch two = batch("x", i64(allocator, new long[] {1}, new long[] {2}))) {
      KvCalls kv = form.over(tq.kv());
      assertThatThrownBy(() -> kv.batchPut(List.of("a", "a"), P, two, null))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.DUPLICATE_KEY))
          .hasMessageContaining("duplicate");
      assertNoKeys(kv);
      assertThat(tq.client().getPartitionList()).doesNotContain(P);
    }
  }

  @ParameterizedTest
  @EnumSource(KvCalls.Form.class)
  void B47_capacity(KvCalls.Form form, BufferAllocator allocator) {
    try (TestSystem tq =
            deployment.start(
                Systems.sysConfig(
                    b ->
                        b.backend(
                            backend ->
                                backend.simpleStorage(
                                    s -> s.numDataStorageUnits(1).totalStorageSize(3L)))));
        Tensor one = Rows.vector(allocator, 1);
        Tensor nine = Rows.vector(allocator, 9)) {
      KvCalls kv = form.over(tq.kv());
      for (String key : List.of("k0", "k1", "k2")) {
        kv.put(key, P, Map.of("x", one), null);
      }
      assertThatThrownBy(() -> kv.put("k3", P, Map.of("x", one), Map.of("t", 1L)))
          .isInstanceOf(TqException.class)
          .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.CAPACITY_EXCEEDED));
      assertThat(kv.list(P).get(P).keySet()).containsExactly("k0", "k1", "k2");

      kv.put("k1", P, Map.of("x", nine), null);
      try (Batch read = kv.batchGet(List.of("k0", "k1", "k2"), P)) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{1}, {9}, {1}});
      }
      kv.clear(List.of("k0"), P);
      kv.put("k3", P, Map.of("x", nine), null);
      try (Batch read = kv.batchGet(List.of("k1", "k2", "k3"), P)) {
        assertThat(longRows(read.column("x"))).isDeepEqualTo(new long[][] {{9}, {1}, {9}});
      }
    }
  }

  /** A parser that turns "float32:HxW" strings into float32 tensors of shape (H, W). */
  private static Batch parseShapes(Batch rows, BufferAllocator allocator) {
    List<Tensor> tensors = new ArrayList<>();
    for (Object spec : ((ObjectColumn) rows.column("data_to_be_parsed")).values()) {
      String[] dims = ((String) spec).substring("float32:".length()).split("x");
      long h = Long.parseLong(dims[0]);
      long w = Long.parseLong(dims[1]);
      Tensor tensor = Tensor.zeros(allocator, DType.FLOAT32, h, w);
      for (long i = 0; i < h * w; i++) {
        tensor.setDouble(i, i * 0.5);
      }
      tensors.add(tensor);
    }
    try {
      return Batch.builder()
          .add("normal_data", rows.column("normal_data"))
          .add("data_to_be_parsed", JaggedColumn.copyOf(allocator, DType.FLOAT32, tensors))
          .build();
    } finally {
      tensors.forEach(Tensor::close);
    }
  }

  private static Batch parserInput(BufferAllocator allocator, int n) {
    float[] normal = new float[n * 2];
    List<Object> specs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      normal[2 * i] = i;
      normal[2 * i + 1] = -i;
      specs.add("float32:" + (i % 4 + 1) + "x" + (i % 3 + 2));
    }
    return Batch.builder()
        .dense("normal_data", Tensor.ofFloats(allocator, DType.FLOAT32, normal, n, 2))
        .objects("data_to_be_parsed", specs)
        .build();
  }

  private static List<String> keys(int n) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      keys.add("parse_" + i);
    }
    return keys;
  }

  @ParameterizedTest
  @EnumSource(KvCalls.Form.class)
  void B48_dataParser(KvCalls.Form form, BufferAllocator allocator) {
    // Data parsers run inside an embedded SimpleStorage manager, registered on it by the user;
    // storage-unit servers have no parser registry (RemoteSimpleStorageManager rejects them).
    assumeTrue(deployment == Deployment.EMBEDDED, "data parsers are registered in-process");
    int n = 32;
    try (TestSystem tq = deployment.fresh();
        Batch input = parserInput(allocator, n)) {
      SimpleStorageManager storage = (SimpleStorageManager) tq.storage();
      storage.parsers().register("shapes", (rows, args, alloc) -> parseShapes(rows, alloc));
      storage
          .parsers()
          .register(
              "adds_a_field",
              (rows, args, alloc) ->
                  Batch.builder()
                      .add("normal_data", rows.column("normal_data").slice(0, rows.rowCount()))
                      .add(
                          "data_to_be_parsed",
                          rows.column("data_to_be_parsed").slice(0, rows.rowCount()))
                      .objects("extra", java.util.Collections.nCopies(rows.rowCount(), 1L))
                      .build());
      storage
          .parsers()
          .register(
              "drops_a_row",
              (rows, args, alloc) ->
                  Batch.builder()
                      .add("normal_data", rows.column("normal_data").slice(1, rows.rowCount()))
                      .add(
                          "data_to_be_parsed",
                          rows.column("data_to_be_parsed").slice(1, rows.rowCount()))
                      .build());
      storage.parsers().register("returns_nothing", (rows, args, alloc) -> null);
      KvCalls kv = form.over(tq.kv());
      List<String> keys = keys(n);
      kv.batchPut(keys, P, input, null, DataParserReference.of("shapes"));
      try (Batch read = kv.batchGet(keys, P)) {
        Eq.assertFieldsEq(read, input, List.of("normal_data"));
        for (int i = 0; i < n; i++) {
          Tensor row = (Tensor) Eq.rowValue(read.column("data_to_be_parsed"), i);
          assertThat(row.dtype()).isEqualTo(DType.FLOAT32);
          assertThat(row.shape()).containsExactly(i % 4 + 1, i % 3 + 2);
          assertThat(row.getDouble(1)).isEqualTo(0.5);
        }
      }

      List<String> others = List.of("other_0", "other_1");
      try (Batch two = parserInput(allocator, 2)) {
        assertThatThrownBy(
                () -> kv.batchPut(others, P, two, null, DataParserReference.of("adds_a_field")))
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
            .hasMessageContaining("must not change dict keys");
        assertThatThrownBy(
                () -> kv.batchPut(others, P, two, null, DataParserReference.of("drops_a_row")))
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
            .hasMessageContaining("number of elements");
        assertThatThrownBy(
                () -> kv.batchPut(others, P, two, null, DataParserReference.of("returns_nothing")))
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.DATA_PARSER_FAILED))
            .hasMessageContaining("must return");
      }
      assertThat(kv.list(P).get(P).keySet()).containsExactlyElementsOf(keys);
    }
  }

  @Test
  void B49_parserOnAnotherBackendIsUnsupported(BufferAllocator allocator) {
    try (TestSystem tq = deployment.fresh(Backend.MOONCAKE_STORE);
        Batch input = parserInput(allocator, 2)) {
      List<String> keys = List.of("p_0", "p_1");
      for (KvCalls.Form form : KvCalls.Form.values()) {
        KvCalls kv = form.over(tq.kv());
        assertThatThrownBy(() -> kv.batchPut(keys, P, input, null, DataParserReference.of("any")))
            .isInstanceOf(TqException.class)
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.UNSUPPORTED_OPERATION));
      }
      assertThat(tq.kv().list(P).getOrDefault(P, Map.of())).isEmpty();
    }
  }
}
