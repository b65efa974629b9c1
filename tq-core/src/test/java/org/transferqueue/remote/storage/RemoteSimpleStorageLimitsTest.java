package org.transferqueue.remote.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.storage.simple.StorageUnitStats;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.TransportConfig;

/**
 * A put or get with more rows than one request may carry bodies (the transport's {@code
 * maxBodySegments}) goes to each remote unit in several requests, held and decided together, as an
 * embedded unit takes it in one call: it used to fail over the network with {@code PROTOCOL_ERROR}
 * ("request has N body segments &gt; maxBodySegments"). Here the limit is 8 bodies.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteSimpleStorageLimitsTest {
  private static final int MAX_BODIES = 8;
  private static final int ROWS = 50;

  private static TransportConfig limited() {
    return TransportConfig.builder()
        .bindHost("127.0.0.1")
        .bindPort(0)
        .defaultCallTimeout(Duration.ofSeconds(20))
        .maxBodySegments(MAX_BODIES)
        .build();
  }

  /** Two units with the given capacity each behind a router, all with the limited transport. */
  private static final class Units implements AutoCloseable {
    final List<StorageUnit> units = new ArrayList<>();
    final List<StorageUnitServer> servers = new ArrayList<>();
    final RemoteSimpleStorageManager manager;

    Units(BufferAllocator allocator, OptionalLong capacity) {
      for (int i = 0; i < 2; i++) {
        StorageUnit unit = new StorageUnit("unit-" + i, capacity, allocator, 1L << 28);
        units.add(unit);
        servers.add(StorageUnitServer.start(unit, limited(), allocator));
      }
      List<HostPort> addresses = servers.stream().map(StorageUnitServer::address).toList();
      manager = new RemoteSimpleStorageManager(addresses, limited(), allocator, update -> {});
    }

    @Override
    public void close() {
      manager.close();
      servers.reversed().forEach(StorageUnitServer::close);
      units.reversed().forEach(StorageUnit::close);
    }
  }

  private static Batch rows(BufferAllocator allocator) {
    long[] ids = new long[ROWS * 2];
    List<Tensor> seqs = new ArrayList<>();
    List<Object> notes = new ArrayList<>();
    for (int i = 0; i < ROWS; i++) {
      ids[2 * i] = i;
      ids[2 * i + 1] = -i;
      float[] seq = new float[1 + i % 5];
      java.util.Arrays.fill(seq, i);
      seqs.add(Tensor.ofFloats(allocator, DType.FLOAT32, seq, seq.length));
      notes.add("row " + i);
    }
    try {
      return Batch.builder()
          .dense("ids", Tensor.ofLongs(allocator, DType.INT64, ids, ROWS, 2))
          .add("seq", JaggedColumn.copyOf(allocator, DType.FLOAT32, seqs))
          .objects("note", notes)
          .build();
    } finally {
      seqs.forEach(Tensor::close);
    }
  }

  private static BatchMeta meta(List<String> fields, FieldSchema schema) {
    long[] gis = new long[ROWS];
    for (int i = 0; i < ROWS; i++) {
      gis[i] = i;
    }
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionId("p");
    fields.forEach(f -> builder.field(f, schema));
    return builder.build();
  }

  @Test
  void shouldPutAndGetMoreRowsThanOneRequestCarriesBodies(BufferAllocator allocator) {
    try (Units remote = new Units(allocator, OptionalLong.empty());
        Batch batch = rows(allocator)) {
      BatchMeta meta = meta(batch.fields(), FieldSchema.placeholder());
      remote.manager.put(batch, meta);
      try (Batch read = remote.manager.get(meta, allocator)) {
        for (String field : batch.fields()) {
          assertThat(read.column(field).contentEquals(batch.column(field))).as(field).isTrue();
        }
      }
      BatchMeta idsMeta = meta(List.of("ids"), FieldSchema.regular(DType.INT64, 2));
      try (Batch ids = remote.manager.get(idsMeta, allocator)) {
        assertThat(ids.column("ids").contentEquals(batch.column("ids"))).isTrue();
      }
      assertThat(remote.manager.directReads()).isEqualTo(1);
      assertThat(remote.manager.unitStats())
          .extracting(StorageUnitStats::samples)
          .containsExactly((long) ROWS / 2, (long) ROWS / 2);
      assertThat(remote.servers).allSatisfy(s -> assertThat(s.heldPuts()).isZero());
    }
  }

  @Test
  void shouldTakeBackEveryRequestOfAPutWhenALaterOneFails(BufferAllocator allocator) {
    try (Units remote = new Units(allocator, OptionalLong.of(ROWS / 2 - 1));
        Batch batch = rows(allocator)) {
      assertThatThrownBy(
              () -> remote.manager.put(batch, meta(batch.fields(), FieldSchema.placeholder())))
          .isInstanceOfSatisfying(
              StorageException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.CAPACITY_EXCEEDED));
      assertThat(remote.manager.unitStats())
          .extracting(StorageUnitStats::samples)
          .containsExactly(0L, 0L);
      assertThat(remote.servers).allSatisfy(s -> assertThat(s.heldPuts()).isZero());
    }
  }
}
