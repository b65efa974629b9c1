package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.storage.simple.Cells.dense;
import static org.transferqueue.storage.simple.Cells.jagged;
import static org.transferqueue.storage.simple.Cells.objects;
import static org.transferqueue.storage.simple.Cells.row;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/** Scenarios 5.D: SimpleStorage checkpoints at the manager level. */
@ExtendWith(LeakCheckExtension.class)
class SimpleStorageCheckpointTest {
  @TempDir Path tmp;

  private static SimpleStorageManager manager(BufferAllocator allocator, int units) {
    return manager(allocator, units, OptionalLong.empty());
  }

  private static SimpleStorageManager manager(
      BufferAllocator allocator, int units, OptionalLong total) {
    return new SimpleStorageManager(
        SimpleStorageConfig.builder().unitCount(units).totalStorageSize(total).build(),
        allocator,
        new RecordingNotifier(),
        new DataParserRegistry());
  }

  private static BatchMeta meta(List<String> fields, long... gis) {
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionId("0");
    fields.forEach(f -> builder.field(f, FieldSchema.placeholder()));
    return builder.build();
  }

  private static void put(StorageManager manager, BatchMeta meta, Batch.Builder data) {
    try (Batch batch = data.build()) {
      manager.put(batch, meta);
    }
  }

  @Test
  void AS037_AS042_roundTripIntoNewUnitsByPosition(BufferAllocator allocator) {
    Path dir = tmp.resolve("simple");
    try (SimpleStorageManager a = manager(allocator, 2)) {
      put(
          a,
          meta(List.of(), 10, 11, 12),
          Batch.builder()
              .add(
                  "log_probs",
                  dense(allocator, new float[] {1, 2}, new float[] {3, 4}, new float[] {5, 6}))
              .add(
                  "rewards",
                  dense(allocator, new float[] {0.1f}, new float[] {0.2f}, new float[] {0.3f})));
      put(
          a,
          meta(List.of(), 7),
          Batch.builder().add("log_probs", dense(allocator, new float[] {7, 8})));
      a.saveCheckpoint(dir);
      assertThat(dir.resolve(SimpleStorageManager.unitFileName(0))).exists();
      assertThat(dir.resolve(SimpleStorageManager.unitFileName(1))).exists();
    }
    try (SimpleStorageManager b = manager(allocator, 2)) {
      b.loadCheckpoint(dir);
      try (Batch read = b.get(meta(List.of("log_probs"), 10, 12, 7), allocator)) {
        assertThat(read.column("log_probs").kind()).isEqualTo(ColumnKind.DENSE);
        assertThat(row(read.column("log_probs"), 0)).containsExactly(1, 2);
        assertThat(row(read.column("log_probs"), 1)).containsExactly(5, 6);
        assertThat(row(read.column("log_probs"), 2)).containsExactly(7, 8);
      }
      assertThat(b.units().get(1).contains(7, List.of("log_probs"))).isTrue();
      try (Batch read = b.get(meta(List.of("rewards"), 11), allocator)) {
        assertThat(row(read.column("rewards"), 0)).containsExactly(0.2f);
      }
    }
  }

  @Test
  void shouldKeepColumnKindsObjectsAndJaggedRows(BufferAllocator allocator) {
    Path dir = tmp.resolve("kinds");
    try (SimpleStorageManager a = manager(allocator, 2)) {
      put(
          a,
          meta(List.of(), 0, 1, 2),
          Batch.builder()
              .add(
                  "seq",
                  jagged(allocator, new float[] {1}, new float[] {1, 2}, new float[] {1, 2, 3}))
              .add("text", objects("a", Map.of("k", 1L), null)));
      put(a, meta(List.of(), 3), Batch.builder().add("x", dense(allocator, new float[] {1, 2})));
      put(a, meta(List.of(), 4), Batch.builder().add("x", dense(allocator, new float[] {1, 2, 3})));
      try (Tensor t = Tensor.ofLongs(allocator, DType.INT64, new long[] {5, 6}, 2)) {
        put(a, meta(List.of(), 5), Batch.builder().add("text", objects(List.of(t))));
      }
      a.saveCheckpoint(dir);
    }
    try (SimpleStorageManager b = manager(allocator, 2)) {
      b.loadCheckpoint(dir);
      try (Batch read = b.get(meta(List.of("seq", "text"), 2, 0, 1), allocator)) {
        assertThat(read.column("seq").kind()).isEqualTo(ColumnKind.JAGGED);
        assertThat(row(read.column("seq"), 0)).containsExactly(1, 2, 3);
        assertThat(row(read.column("seq"), 1)).containsExactly(1);
        assertThat(((ObjectColumn) read.column("text")).values())
            .containsExactly(null, "a", Map.of("k", 1L));
      }
      try (Batch read = b.get(meta(List.of("x"), 3), allocator)) {
        assertThat(read.column("x").kind()).isEqualTo(ColumnKind.DENSE);
      }
      try (Batch read = b.get(meta(List.of("text"), 5), allocator)) {
        Object value = ((ObjectColumn) read.column("text")).values().getFirst();
        assertThat(((Tensor) ((List<?>) value).getFirst()).toLongArray()).containsExactly(5, 6);
      }
    }
  }

  @Test
  void AS038_loadReplacesTheWholeContent(BufferAllocator allocator) {
    Path dir = tmp.resolve("replace");
    try (SimpleStorageManager a = manager(allocator, 2)) {
      put(
          a,
          meta(List.of(), 20, 21),
          Batch.builder().add("val", dense(allocator, new float[] {1}, new float[] {2})));
      a.saveCheckpoint(dir);
    }
    try (SimpleStorageManager b = manager(allocator, 2)) {
      put(b, meta(List.of(), 99), Batch.builder().add("val", dense(allocator, new float[] {999})));
      b.loadCheckpoint(dir);
      try (Batch read = b.get(meta(List.of("val"), 20, 21), allocator)) {
        assertThat(row(read.column("val"), 1)).containsExactly(2);
      }
      assertThatThrownBy(() -> b.get(meta(List.of("val"), 99), allocator))
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.NOT_FOUND);
    }
  }

  @Test
  void AS041_shouldRejectUnitCountMismatchAndMissingDirectory(BufferAllocator allocator)
      throws Exception {
    Path dir = tmp.resolve("two");
    try (SimpleStorageManager a = manager(allocator, 2)) {
      a.saveCheckpoint(dir);
    }
    try (SimpleStorageManager c = manager(allocator, 3)) {
      assertThatThrownBy(() -> c.loadCheckpoint(dir))
          .hasMessageContaining(
              "Storage unit count mismatch: checkpoint has 2, current system has 3");
      assertThatThrownBy(() -> c.loadCheckpoint(tmp.resolve("absent")))
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.NOT_FOUND);
    }
    Files.delete(dir.resolve(SimpleStorageManager.unitFileName(1)));
    Files.createFile(dir.resolve("unit_7.tqs"));
    try (SimpleStorageManager b = manager(allocator, 2)) {
      assertThatThrownBy(() -> b.loadCheckpoint(dir))
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.NOT_FOUND);
    }
  }

  @Test
  void shouldRejectCheckpointExceedingCapacityAndKeepContent(BufferAllocator allocator) {
    Path dir = tmp.resolve("big");
    try (SimpleStorageManager a = manager(allocator, 1)) {
      put(
          a,
          meta(List.of(), 0, 1, 2),
          Batch.builder()
              .add("v", dense(allocator, new float[] {0}, new float[] {1}, new float[] {2})));
      a.saveCheckpoint(dir);
    }
    try (SimpleStorageManager small = manager(allocator, 1, OptionalLong.of(2))) {
      put(small, meta(List.of(), 5), Batch.builder().add("v", dense(allocator, new float[] {5})));
      assertThatThrownBy(() -> small.loadCheckpoint(dir))
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.CAPACITY_EXCEEDED);
      try (Batch read = small.get(meta(List.of("v"), 5), allocator)) {
        assertThat(row(read.column("v"), 0)).containsExactly(5);
      }
    }
  }
}
