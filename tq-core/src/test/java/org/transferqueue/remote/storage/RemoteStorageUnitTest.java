package org.transferqueue.remote.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.remote.RemoteCalls;
import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.remote.Wire;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.simple.StorageUnitStats;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Seeds;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;
import org.transferqueue.transport.TransportClient;

/** SimpleStorage over remote storage units: round trips, typed errors, robustness. */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteStorageUnitTest {
  private static final ProductionNotifier ACCEPT_ALL = update -> {};

  private static BatchMeta meta(List<String> fields, long... gis) {
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionId("p");
    fields.forEach(f -> builder.field(f, FieldSchema.placeholder()));
    return builder.build();
  }

  private static Tensor random(
      BufferAllocator allocator, DType dtype, Random random, long... shape) {
    Tensor t = Tensor.allocate(allocator, dtype, shape);
    MemorySegment s = t.segment();
    for (long i = 0; i < s.byteSize(); i++) {
      byte b = (byte) random.nextInt();
      s.set(ValueLayout.JAVA_BYTE, i, dtype == DType.BOOL ? (byte) (b & 1) : b);
    }
    return t;
  }

  @Test
  void shouldRoundTripEveryDtypeAndColumnKindThroughTwoUnits(BufferAllocator allocator) {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), ACCEPT_ALL)) {
      for (DType dtype : DType.values()) {
        List<Tensor> rows = new ArrayList<>();
        Batch batch;
        try {
          for (int r = 0; r < 5; r++) {
            rows.add(random(allocator, dtype, random, r, 3));
          }
          Tensor nested = random(allocator, dtype, random, 2, 2);
          Map<String, Object> map = new LinkedHashMap<>();
          map.put("t", nested); // owned by the batch from here on
          map.put("bytes", new byte[] {1, 2, 3});
          batch =
              Batch.builder()
                  .dense("dense", random(allocator, dtype, random, 5, 2, 3))
                  .dense("scalar", random(allocator, dtype, random, 5))
                  .add("jagged", JaggedColumn.copyOf(allocator, dtype, rows))
                  .objects("objects", Arrays.asList(1L, null, "s", List.of(2.5, true), map))
                  .build();
        } finally {
          rows.forEach(Tensor::close);
        }
        try (batch) {
          List<String> fields = List.of("objects", "jagged", "dense", "scalar");
          remote.manager.put(batch, meta(List.of(), 20, 21, 22, 23, 24));
          try (Batch read = remote.manager.get(meta(fields, 24, 20, 23, 21, 22), allocator);
              Batch expected = batch.selectRows(allocator, new int[] {4, 0, 3, 1, 2})) {
            for (String field : fields) {
              String what = dtype + " " + field + " seed=" + seed;
              assertThat(read.column(field).kind()).as(what).isEqualTo(batch.column(field).kind());
              assertThat(read.column(field).contentEquals(expected.column(field)))
                  .as(what)
                  .isTrue();
            }
            Object last = ((ObjectColumn) read.column("objects")).get(0);
            assertThat(((Map<?, ?>) last).get("bytes")).isEqualTo(new byte[] {1, 2, 3});
          }
        }
      }
    }
  }

  @Test
  void shouldRoundTripObjectColumnsLargerThanTheMetadataLimit(BufferAllocator allocator) {
    // 2 rows of 9 MiB strings per unit: the encoded column is larger than maxMetadataBytes
    // (16 MiB), so it must travel as a body in the PUT and in the GET reply.
    assertThat(RemoteUnits.config().maxMetadataBytes()).isLessThan(18L << 20);
    List<Object> values = new ArrayList<>();
    for (int r = 0; r < 4; r++) {
      values.add((char) ('a' + r) + "x".repeat(9 << 20));
    }
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), ACCEPT_ALL);
        Batch batch = Batch.builder().objects("text", values).build()) {
      remote.manager.put(batch, meta(List.of(), 10, 11, 12, 13));
      try (Batch read = remote.manager.get(meta(List.of("text"), 13, 10, 12, 11), allocator)) {
        ObjectColumn text = (ObjectColumn) read.column("text");
        assertThat(List.of(text.get(0), text.get(1), text.get(2), text.get(3)))
            .isEqualTo(List.of(values.get(3), values.get(0), values.get(2), values.get(1)));
      }
    }
  }

  @Test
  void shouldFailWithCapacityExceededAndKeepStoredDataOnEveryUnit(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.of(2), ACCEPT_ALL);
        Tensor first = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3}, 3);
        Batch firstBatch = Batch.builder().dense("x", first).build();
        Tensor second = Tensor.ofLongs(allocator, DType.INT64, new long[] {7, 8, 9}, 3);
        Batch secondBatch = Batch.builder().dense("x", second).build()) {
      // unit 0 gets 0 and 2, unit 1 gets 1.
      remote.manager.put(firstBatch, meta(List.of(), 0, 1, 2));

      // 1 and 3 fit on unit 1 (overwrite + one new); 4 is a third sample on full unit 0.
      assertThatThrownBy(() -> remote.manager.put(secondBatch, meta(List.of(), 1, 3, 4)))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.CAPACITY_EXCEEDED))
          .hasMessageContaining("Storage capacity exceeded");

      try (Batch read = remote.manager.get(meta(List.of("x"), 0, 1, 2), allocator)) {
        assertThat(((DenseColumn) read.column("x")).tensor().toLongArray())
            .containsExactly(1, 2, 3);
      }
      assertThatThrownBy(() -> remote.manager.get(meta(List.of("x"), 3), allocator))
          .isInstanceOfSatisfying(
              StorageException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOT_FOUND));
      assertThat(remote.servers).allSatisfy(s -> assertThat(s.heldPuts()).isZero());
      assertThat(remote.manager.unitStats())
          .extracting(StorageUnitStats::samples)
          .containsExactly(2L, 1L);
    }
  }

  @Test
  void shouldReportUnknownFieldAsTypedError(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), ACCEPT_ALL);
        Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2}, 2);
        Batch batch = Batch.builder().dense("x", t).build()) {
      remote.manager.put(batch, meta(List.of(), 0, 1));

      assertThatThrownBy(() -> remote.manager.get(meta(List.of("x", "nope"), 0, 1), allocator))
          .isInstanceOfSatisfying(
              StorageException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_FIELD))
          .hasMessageContaining("field 'nope' not found");
      try (Batch read = remote.manager.get(meta(List.of("x"), 1, 0), allocator)) {
        assertThat(((DenseColumn) read.column("x")).tensor().toLongArray()).containsExactly(2, 1);
      }
    }
  }

  @Test
  void shouldRollBackEveryUnitWhenTheControllerRejects(BufferAllocator allocator) {
    ProductionNotifier reject =
        update -> {
          throw new TqException(ErrorCode.SCHEMA_CONFLICT, "rejected");
        };
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), reject);
        Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3}, 3);
        Batch batch = Batch.builder().dense("x", t).build()) {
      assertThatThrownBy(() -> remote.manager.put(batch, meta(List.of(), 0, 1, 2)))
          .isInstanceOf(TqException.class);

      assertThat(remote.manager.unitStats()).allSatisfy(s -> assertThat(s.samples()).isZero());
      assertThat(remote.servers).allSatisfy(s -> assertThat(s.heldPuts()).isZero());
    }
  }

  @Test
  void shouldKeepDenseAndJaggedKindsApartAcrossUnits(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), ACCEPT_ALL);
        Tensor a = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2}, 1, 2);
        Batch dense = Batch.builder().dense("x", a).build();
        Tensor b = Tensor.ofLongs(allocator, DType.INT64, new long[] {3, 4, 5}, 1, 3);
        Batch wider = Batch.builder().dense("x", b).build();
        Tensor c = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1}, 1);
        Batch floats = Batch.builder().dense("x", c).build()) {
      remote.manager.put(dense, meta(List.of(), 0));
      remote.manager.put(wider, meta(List.of(), 1));

      try (Batch read = remote.manager.get(meta(List.of("x"), 1, 0), allocator)) {
        assertThat(read.column("x").kind()).isEqualTo(ColumnKind.JAGGED);
        JaggedColumn x = (JaggedColumn) read.column("x");
        assertThat(x.row(0).toLongArray()).containsExactly(3, 4, 5);
        assertThat(x.row(1).toLongArray()).containsExactly(1, 2);
      }
      remote.manager.put(floats, meta(List.of(), 2));
      assertThatThrownBy(() -> remote.manager.get(meta(List.of("x"), 0, 2), allocator))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_CONFLICT));
    }
  }

  private static BatchMeta metaWith(String field, FieldSchema schema, long... gis) {
    return BatchMeta.builder().globalIndexes(gis).partitionId("p").field(field, schema).build();
  }

  @Test
  void shouldReadStraightIntoColumnsAllocatedFromTheExpectedShapes(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), ACCEPT_ALL);
        Tensor dense = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4, 5, 6}, 3, 2);
        Tensor r0 = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1}, 1);
        Tensor r1 = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {2, 3}, 2);
        Tensor r2 = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {4, 5, 6}, 3);
        Batch batch =
            Batch.builder()
                .dense("d", dense)
                .add("j", JaggedColumn.copyOf(allocator, DType.FLOAT32, List.of(r0, r1, r2)))
                .build()) {
      remote.manager.put(batch, meta(List.of(), 0, 1, 2));

      BatchMeta regular = metaWith("d", FieldSchema.regular(DType.INT64, 2), 2, 0, 1);
      try (ExpectedColumns expected = ExpectedColumns.of(regular, allocator)) {
        assertThat(expected).isNotNull();
        assertThat(expected.targets(new int[] {0, 2})).hasSize(2);
      }
      try (Batch read = remote.manager.get(regular, allocator)) {
        assertThat(read.column("d").kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(((DenseColumn) read.column("d")).tensor().toLongArray())
            .containsExactly(5, 6, 1, 2, 3, 4);
      }
      BatchMeta nested =
          metaWith(
              "j", FieldSchema.nestedOf(DType.FLOAT32, List.of(List.of(3L), List.of(1L))), 2, 0);
      try (Batch read = remote.manager.get(nested, allocator)) {
        JaggedColumn j = (JaggedColumn) read.column("j");
        assertThat(j.row(0).toFloatArray()).containsExactly(4, 5, 6);
        assertThat(j.row(1).toFloatArray()).containsExactly(1);
      }
      assertThat(remote.manager.directReads()).isEqualTo(2);
      assertThat(ExpectedColumns.of(meta(List.of("d"), 0), allocator)).isNull();
    }
  }

  @Test
  void shouldFallBackWhenStoredCellsDifferFromTheExpectedShapes(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), ACCEPT_ALL);
        Tensor r0 = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2}, 2);
        Tensor r1 = Tensor.ofLongs(allocator, DType.INT64, new long[] {3, 4}, 2);
        Batch uniformJagged =
            Batch.builder()
                .add("j", JaggedColumn.copyOf(allocator, DType.INT64, List.of(r0, r1)))
                .build();
        Tensor big = Tensor.ofLongs(allocator, DType.INT64, new long[] {7, 8, 9, 10}, 2, 2);
        Batch dense = Batch.builder().dense("d", big).build()) {
      remote.manager.put(uniformJagged, meta(List.of(), 0, 1));
      remote.manager.put(dense, meta(List.of(), 0, 1));

      // The metadata says regular [2]: same bytes, but the cells were put jagged.
      try (Batch read =
          remote.manager.get(metaWith("j", FieldSchema.regular(DType.INT64, 2), 1, 0), allocator)) {
        assertThat(read.column("j").kind()).isEqualTo(ColumnKind.JAGGED);
        assertThat(((JaggedColumn) read.column("j")).row(0).toLongArray()).containsExactly(3, 4);
      }
      // The metadata says [1] but the cells hold [2]: larger than the allocated rows.
      try (Batch read =
          remote.manager.get(metaWith("d", FieldSchema.regular(DType.INT64, 1), 1, 0), allocator)) {
        assertThat(((DenseColumn) read.column("d")).tensor().toLongArray())
            .containsExactly(9, 10, 7, 8);
      }
      assertThat(remote.manager.directReads()).isZero();
    }
  }

  @Test
  void shouldHoldPutsUnderClientTokensAndRejectATokenInUse(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 1, OptionalLong.empty(), ACCEPT_ALL);
        Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2}, 2);
        Batch batch = Batch.builder().dense("x", t).build()) {
      RemoteStorageUnit unit = remote.manager.units().getFirst();
      StorageUnitServer server = remote.servers.getFirst();
      RemoteCalls.join(
          unit.putAsync(new long[] {0}, new long[1], batch, new int[] {0}, 42, allocator));
      assertThat(server.heldPuts()).isEqualTo(1);

      assertThatThrownBy(
              () ->
                  RemoteCalls.join(
                      unit.putAsync(
                          new long[] {1}, new long[1], batch, new int[] {1}, 42, allocator)))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("token=42");
      assertThat(remote.units.getFirst().stats().samples()).isEqualTo(1);

      RemoteCalls.join(unit.finishAsync(new long[] {7, 42}, true));
      assertThat(server.heldPuts()).isZero();
      assertThat(remote.units.getFirst().stats().samples()).isZero();
    }
  }

  @Test
  void shouldTakeBackAHeldPutWhenItsRollbackArrivedBeforeIt(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 1, OptionalLong.empty(), ACCEPT_ALL);
        Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2}, 2);
        Batch batch = Batch.builder().dense("x", t).build()) {
      RemoteStorageUnit unit = remote.manager.units().getFirst();
      StorageUnitServer server = remote.servers.getFirst();
      // A client that gave up on put 42 by its deadline rolls it back before the unit handled it.
      RemoteCalls.join(unit.finishAsync(new long[] {42}, true));

      assertThatThrownBy(
              () ->
                  RemoteCalls.join(
                      unit.putAsync(
                          new long[] {0}, new long[1], batch, new int[] {0}, 42, allocator)))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("token=42 was rolled back before it arrived");
      assertThat(server.heldPuts()).isZero();
      assertThat(remote.units.getFirst().stats().samples()).isZero();

      // The early rollback is used up: the same token may hold a later put.
      RemoteCalls.join(
          unit.putAsync(new long[] {1}, new long[1], batch, new int[] {1}, 42, allocator));
      assertThat(server.heldPuts()).isEqualTo(1);
      RemoteCalls.join(unit.finishAsync(new long[] {42}, false));
      assertThat(server.heldPuts()).isZero();
      assertThat(remote.units.getFirst().stats().samples()).isEqualTo(1);
    }
  }

  @Test
  void shouldAnswerAMalformedRequestWithAnErrorAndKeepServing(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 1, OptionalLong.empty(), ACCEPT_ALL);
        TransportClient client = new TransportClient(RemoteUnits.config(), allocator)) {
      var address = remote.servers.getFirst().address();
      for (int type = StorageUnitProtocol.PUT.typeId();
          type <= StorageUnitProtocol.ABORT_LOAD.typeId();
          type++) {
        Request garbage = Request.of(type, new byte[] {(byte) 0xC1, 1, 2});
        assertThatThrownBy(() -> client.call(address, garbage).close())
            .as("type " + type)
            .isInstanceOfSatisfying(
                ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR));
      }
      // A PUT naming more bodies than it carries.
      byte[] lying =
          new Wire.Writer()
              .array(4)
              .i64(0)
              .longs(new long[] {0})
              .longs(new long[] {0})
              .array(1)
              .array(4)
              .str("x")
              .i64(ColumnKind.DENSE.ordinal())
              .str("int64")
              .array(1)
              .longs(new long[] {1})
              .toBytes();
      assertThatThrownBy(
              () -> client.call(address, Request.of(StorageUnitProtocol.PUT.typeId(), lying)))
          .isInstanceOf(ProtocolException.class)
          .hasMessageContaining("bodies");

      try (Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {5}, 1);
          Batch batch = Batch.builder().dense("x", t).build()) {
        remote.manager.put(batch, meta(List.of(), 0));
        try (Batch read = remote.manager.get(meta(List.of("x"), 0), allocator)) {
          assertThat(((DenseColumn) read.column("x")).tensor().toLongArray()).containsExactly(5);
        }
      }
      try (Response stats =
          client.call(
              address,
              Request.of(
                  StorageUnitProtocol.STATS.typeId(), new Wire.Writer().array(0).toBytes()))) {
        assertThat(stats.metadata()).isNotEmpty();
      }
      assertThat(remote.units.getFirst().stats().samples()).isEqualTo(1);
    }
  }

  @Test
  void shouldRestoreACheckpointSavedByTheUnits(BufferAllocator allocator, @TempDir Path dir) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), ACCEPT_ALL);
        Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3}, 3);
        Batch batch = Batch.builder().dense("x", t).build()) {
      remote.manager.put(batch, meta(List.of(), 0, 1, 2));
      remote.manager.saveCheckpoint(dir);
      remote.manager.clear(meta(List.of(), 0, 1, 2));

      remote.manager.loadCheckpoint(dir);

      try (Batch read = remote.manager.get(meta(List.of("x"), 2, 1, 0), allocator)) {
        assertThat(((DenseColumn) read.column("x")).tensor().toLongArray())
            .containsExactly(3, 2, 1);
      }
    }
  }

  @Test
  void shouldReturnNullWhenEveryCallSucceeds() {
    List<CompletableFuture<Void>> calls =
        List.of(CompletableFuture.completedFuture(null), CompletableFuture.completedFuture(null));

    assertThat(RemoteCalls.joinAll(calls, (i, e) -> e)).isNull();
  }

  @Test
  void shouldNameFirstFailureAndSuppressLaterOnesWhenSeveralCallsFail() {
    StorageException first = new StorageException(ErrorCode.STORAGE_ERROR, "unit 1 down");
    StorageException second = new StorageException(ErrorCode.NOT_FOUND, "unit 3 lost it");
    List<CompletableFuture<Void>> calls =
        List.of(
            CompletableFuture.completedFuture(null),
            CompletableFuture.failedFuture(first),
            CompletableFuture.completedFuture(null),
            CompletableFuture.failedFuture(second));
    List<Integer> named = new ArrayList<>();

    RuntimeException failure =
        RemoteCalls.joinAll(
            calls,
            (i, e) -> {
              named.add(i);
              return new IllegalStateException("call " + i, e);
            });

    assertThat(named).containsExactly(1);
    assertThat(failure).hasMessage("call 1").hasCause(first);
    assertThat(failure.getSuppressed()).containsExactly(second);
  }
}
