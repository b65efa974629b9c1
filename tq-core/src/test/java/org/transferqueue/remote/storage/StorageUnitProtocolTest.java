package org.transferqueue.remote.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
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
import org.transferqueue.remote.DocumentedLayouts;
import org.transferqueue.remote.ProtocolTables;
import org.transferqueue.remote.RemoteCalls;
import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.remote.Wire;
import org.transferqueue.storage.checkpoint.FileDigest;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.InProcessExchange;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;

/**
 * Every storage-unit message type (200-208) encoded by {@link RemoteStorageUnit}, decoded and
 * answered by {@link StorageUnitServer}'s handlers and decoded again by the proxy, in this thread:
 * no byte crosses a socket.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StorageUnitProtocolTest {
  private static final List<String> FIELDS = List.of("ids", "seq", "note");

  private static Batch rows(BufferAllocator allocator) {
    try (Tensor r0 = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {0.5f}, 1);
        Tensor r1 = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1, 2, 3}, 3);
        Tensor r2 = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {-1, -2}, 2)) {
      return Batch.builder()
          .dense("ids", Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4, 5, 6}, 3, 2))
          .add("seq", JaggedColumn.copyOf(allocator, DType.FLOAT32, List.of(r0, r1, r2)))
          .objects("note", List.of("a", 7L, Map.of("k", 1L)))
          .build();
    }
  }

  @Test
  void shouldEncodeAndDecodeEveryMessageTypeWithoutSockets(
      BufferAllocator allocator, @TempDir Path dir) {
    Set<Integer> sent = new TreeSet<>();
    DocumentedLayouts layouts = DocumentedLayouts.read();
    try (StorageUnit unit = new StorageUnit("unit-0", OptionalLong.of(8), allocator, 1L << 26);
        StorageUnitServer server = StorageUnitServer.start(unit, RemoteUnits.config(), allocator);
        Batch batch = rows(allocator)) {
      RemoteStorageUnit remote =
          new RemoteStorageUnit(
              (address, request, destination, timeout) -> {
                sent.add(request.type());
                return layouts.checking(
                    request,
                    InProcessExchange.respond(server.transport(), request, destination, allocator));
              },
              server.address(),
              Duration.ofSeconds(20));
      int[] all = {0, 1, 2};
      // PUT (plain), GET
      RemoteCalls.join(
          remote.putAsync(new long[] {10, 11, 12}, new long[3], batch, all, 0, allocator));
      assertThat(unit.contains(11, FIELDS)).isTrue();
      try (UnitRows read =
          RemoteCalls.join(remote.getAsync(new long[] {12, 10}, new long[2], FIELDS, allocator))) {
        UnitRows.FieldRows ids = read.field(0);
        assertThat(ids.objects()).isFalse();
        assertThat(ids.kinds()).containsExactly(ColumnKind.DENSE, ColumnKind.DENSE);
        assertThat(ids.dtypes()).containsExactly(DType.INT64, DType.INT64);
        assertThat(ids.shapes()).isDeepEqualTo(new long[][] {{2}, {2}});
        assertThat(longs(ids.rows().get(0))).containsExactly(5, 6);
        assertThat(longs(ids.rows().get(1))).containsExactly(1, 2);
        UnitRows.FieldRows seq = read.field(1);
        assertThat(seq.kinds()).containsExactly(ColumnKind.JAGGED, ColumnKind.JAGGED);
        assertThat(seq.shapes()).isDeepEqualTo(new long[][] {{2}, {1}});
        assertThat(floats(seq.rows().get(0))).containsExactly(-1f, -2f);
        assertThat(floats(seq.rows().get(1))).containsExactly(0.5f);
        UnitRows.FieldRows note = read.field(2);
        assertThat(note.objects()).isTrue();
        assertThat(List.<Object>copyOf(note.decodeValues(allocator)))
            .containsExactly(Map.of("k", 1L), "a");
      }
      // PUT held under a token, FINISH rolling it back, then another committed
      RemoteCalls.join(
          remote.putAsync(new long[] {20}, new long[1], batch, new int[] {1}, 5, allocator));
      RemoteCalls.join(remote.finishAsync(new long[] {5}, true));
      assertThat(unit.contains(20, List.of("ids"))).isFalse();
      RemoteCalls.join(
          remote.putAsync(new long[] {21}, new long[1], batch, new int[] {1}, 6, allocator));
      RemoteCalls.join(remote.finishAsync(new long[] {6}, false));
      assertThat(unit.contains(21, FIELDS)).isTrue();
      // CLEAR, STATS
      assertThat(RemoteCalls.join(remote.clearAsync(new long[] {10, 99}, new long[2])))
          .isEqualTo(1L);
      assertThat(remote.stats()).isEqualTo(unit.stats());
      assertThat(remote.stats().samples()).isEqualTo(3);
      assertThat(remote.stats().capacitySamples()).hasValue(8);
      // SAVE_CHECKPOINT; PREPARE_LOAD then ABORT_LOAD changes nothing; PREPARE_LOAD, COMMIT_LOAD
      String file = dir.resolve("unit-0.ckpt").toString();
      FileDigest digest = RemoteCalls.join(remote.saveCheckpointAsync(file));
      RemoteCalls.join(remote.clearAsync(new long[] {11, 12, 21}, new long[3]));
      assertThat(unit.stats().samples()).isZero();
      RemoteCalls.join(remote.prepareLoadAsync(1, file, digest));
      RemoteCalls.join(remote.abortLoadAsync(1));
      assertThat(unit.stats().samples()).isZero();
      RemoteCalls.join(remote.prepareLoadAsync(2, file, digest));
      assertThat(unit.stats().samples()).isZero();
      RemoteCalls.join(remote.commitLoadAsync(2));
      assertThat(unit.contains(12, FIELDS)).isTrue();
      assertThat(unit.contains(21, FIELDS)).isTrue();
      assertThat(unit.contains(10, FIELDS)).isFalse();
      // Typed errors travel with their codes.
      assertThatThrownBy(
              () ->
                  RemoteCalls.join(
                      remote.getAsync(new long[] {12}, new long[1], List.of("missing"), allocator)))
          .isInstanceOf(StorageException.class)
          .extracting(e -> ((StorageException) e).code())
          .isEqualTo(ErrorCode.UNKNOWN_FIELD);
    }
    assertThat(sent).containsExactlyElementsOf(ProtocolTables.typeIds(StorageUnitProtocol.types()));
    assertThat(layouts.checked()).containsAll(sent);
  }

  @Test
  void shouldRejectMalformedMetadataOfEveryMessageTypeWithoutSockets(BufferAllocator allocator) {
    try (StorageUnit unit = new StorageUnit("unit-0", OptionalLong.empty(), allocator, 1L << 26);
        StorageUnitServer server = StorageUnitServer.start(unit, RemoteUnits.config(), allocator)) {
      byte[] notAnArray = new Wire.Writer().str("not an array").toBytes();
      for (int type : ProtocolTables.typeIds(StorageUnitProtocol.types())) {
        assertThat(
                InProcessExchange.respond(
                    server.transport(),
                    Request.of(type, notAnArray),
                    org.transferqueue.transport.BodyDestination.allocateFrom(allocator),
                    allocator))
            .as("type %d", type)
            .failsWithin(Duration.ofSeconds(10))
            .withThrowableThat()
            .havingCause()
            .isInstanceOf(ProtocolException.class);
      }
      assertThat(unit.stats().samples()).isZero();
    }
  }

  @Test
  void shouldRejectStringsThatAreNotUtf8WhenAForeignClientSendsThem(BufferAllocator allocator) {
    // U+D800 encoded as if it were a code point: what a client that does not check sends.
    byte[] surrogate = {(byte) 0xa3, (byte) 0xed, (byte) 0xa0, (byte) 0x80};
    try (StorageUnit unit = new StorageUnit("unit-0", OptionalLong.empty(), allocator, 1L << 26);
        StorageUnitServer server = StorageUnitServer.start(unit, RemoteUnits.config(), allocator)) {
      byte[] densePut =
          ProtocolTables.concat(
              new Wire.Writer()
                  .array(4)
                  .i64(0)
                  .longs(new long[] {1})
                  .longs(new long[] {0})
                  .array(1)
                  .array(4)
                  .toBytes(),
              surrogate,
              new Wire.Writer()
                  .i64(ColumnKind.DENSE.ordinal())
                  .str("int64")
                  .array(1)
                  .longs(new long[] {1})
                  .toBytes());
      byte[] get =
          ProtocolTables.concat(
              new Wire.Writer()
                  .array(3)
                  .longs(new long[] {1})
                  .longs(new long[] {0})
                  .array(1)
                  .toBytes(),
              surrogate);
      byte[] mainFrame = ProtocolTables.concat(new byte[] {(byte) 0x91}, surrogate); // [the string]
      byte[] objectPut =
          new Wire.Writer()
              .array(4)
              .i64(0)
              .longs(new long[] {1})
              .longs(new long[] {0})
              .array(1)
              .array(4)
              .str("note")
              .i64(ColumnKind.OBJECT.ordinal())
              .i64(mainFrame.length)
              .i64(0)
              .toBytes();
      MemorySegment row = MemorySegment.ofArray(new long[] {7});
      assertThat(
              respond(
                  server, allocator, Request.of(StorageUnitProtocol.PUT.typeId(), densePut, row)))
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableThat()
          .havingCause()
          .isInstanceOfSatisfying(
              ProtocolException.class, e -> assertThat(e.getMessage()).contains("not valid UTF-8"));
      assertThat(respond(server, allocator, Request.of(StorageUnitProtocol.GET.typeId(), get)))
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableThat()
          .havingCause()
          .isInstanceOf(ProtocolException.class);
      // Inside an object value the main frame's own codec refuses it (docs/PROTOCOL.md section 10).
      Request objects =
          Request.of(StorageUnitProtocol.PUT.typeId(), objectPut, MemorySegment.ofArray(mainFrame));
      assertThat(respond(server, allocator, objects))
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableThat()
          .havingCause()
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
          .withMessageContaining("not valid UTF-8");
      assertThat(unit.stats().samples()).isZero();
      byte[] stats = new Wire.Writer().array(0).toBytes();
      try (Response reply =
          respond(server, allocator, Request.of(StorageUnitProtocol.STATS.typeId(), stats))
              .join()) {
        assertThat(reply.metadata()).isNotEmpty();
      }
    }
  }

  private static CompletableFuture<Response> respond(
      StorageUnitServer server, BufferAllocator allocator, Request request) {
    return InProcessExchange.respond(
        server.transport(), request, BodyDestination.allocateFrom(allocator), allocator);
  }

  private static long[] longs(MemorySegment row) {
    return row.toArray(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED);
  }

  private static float[] floats(MemorySegment row) {
    return row.toArray(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED);
  }
}
