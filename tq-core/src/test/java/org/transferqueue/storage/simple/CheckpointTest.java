package org.transferqueue.storage.simple;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.storage.simple.Cells.dense;
import static org.transferqueue.storage.simple.Cells.jagged;
import static org.transferqueue.storage.simple.Cells.objects;
import static org.transferqueue.storage.simple.Cells.row;

import java.io.IOException;
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
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/** Scenarios 5.D: unit and manager checkpoints. */
@ExtendWith(LeakCheckExtension.class)
class CheckpointTest {

  private static SimpleStorageManager manager(BufferAllocator allocator, int units) {
    SimpleStorageSettings config =
        SimpleStorageSettings.builder()
            .unitCount(units)
            .totalStorageSize(OptionalLong.empty())
            .build();
    return new SimpleStorageManager(
        config, allocator, new RecordingNotifier(), new DataParserRegistry());
  }

  private static BatchMeta meta(List<String> fields, long... gis) {
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionId("0");
    fields.forEach(f -> builder.field(f, FieldSchema.placeholder()));
    return builder.build();
  }

  private static ErrorCode codeOf(Throwable e) {
    return ((TqException) e).code();
  }

  @Test
  void AS037_unitRoundTrip(BufferAllocator allocator, @TempDir Path dir) {
    Path file = dir.resolve("unit.ckpt");
    try (StorageUnit saved = StorageUnitTest.unit(allocator, -1);
        StorageUnit fresh = StorageUnitTest.unit(allocator, -1)) {
      StorageUnitTest.put(
          saved,
          new long[] {10, 11, 12},
          Batch.builder()
              .add(
                  "log_probs",
                  dense(allocator, new float[] {1, 2}, new float[] {3, 4}, new float[] {5, 6}))
              .add(
                  "rewards",
                  dense(allocator, new float[] {0.1f}, new float[] {0.2f}, new float[] {0.3f}))
              .add("resp", jagged(allocator, new float[] {1}, new float[] {}, new float[] {2, 3}))
              .add("tag", objects("a", Map.of("k", List.of(1L, 2L)), new byte[] {9})));

      saved.saveCheckpoint(file);
      fresh.loadCheckpoint(file);

      assertThat(file).exists();
      List<String> fields = List.of("log_probs", "resp", "rewards", "tag");
      try (Batch read =
              fresh.get(
                  new long[] {10, 11, 12},
                  UnknownGenerations.of(new long[] {10, 11, 12}),
                  fields,
                  allocator);
          Batch original =
              saved.get(
                  new long[] {10, 11, 12},
                  UnknownGenerations.of(new long[] {10, 11, 12}),
                  fields,
                  allocator)) {
        assertThat(row(read.column("log_probs"), 0)).containsExactly(1, 2);
        assertThat(row(read.column("log_probs"), 2)).containsExactly(5, 6);
        assertThat(row(read.column("rewards"), 1)).containsExactly(0.2f);
        assertThat(read.column("resp").kind()).isEqualTo(ColumnKind.JAGGED);
        for (String field : fields) {
          assertThat(read.column(field).contentEquals(original.column(field))).as(field).isTrue();
        }
      }
      assertThat(fresh.stats().cells()).isEqualTo(12);
    }
  }

  @Test
  void shouldKeepEverySamplesGenerationThroughACheckpoint(
      BufferAllocator allocator, @TempDir Path dir) {
    Path file = dir.resolve("unit.ckpt");
    try (StorageUnit first = StorageUnitTest.unit(allocator, -1);
        StorageUnit second = StorageUnitTest.unit(allocator, -1);
        Batch rows =
            Batch.builder()
                .add("val", dense(allocator, new float[] {1}, new float[] {2}))
                .build()) {
      first.put(new long[] {3, 4}, new long[] {2, 0}, rows);
      first.saveCheckpoint(file);
      second.loadCheckpoint(file);

      assertThatThrownBy(
              () -> second.get(new long[] {3}, new long[] {1}, List.of("val"), allocator).close())
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.STALE_METADATA));
      try (Batch read =
          second.get(new long[] {3, 4}, new long[] {2, 0}, List.of("val"), allocator)) {
        assertThat(row(read.column("val"), 0)).containsExactly(1);
      }
    }
  }

  @Test
  void AS038_loadReplacesTheState(BufferAllocator allocator, @TempDir Path dir) {
    Path file = dir.resolve("unit.ckpt");
    try (StorageUnit first = StorageUnitTest.unit(allocator, -1);
        StorageUnit second = StorageUnitTest.unit(allocator, -1)) {
      StorageUnitTest.put(
          first,
          new long[] {20, 21},
          Batch.builder().add("val", dense(allocator, new float[] {1}, new float[] {2})));
      StorageUnitTest.put(
          second, new long[] {99}, Batch.builder().add("val", dense(allocator, new float[] {999})));
      first.saveCheckpoint(file);

      second.loadCheckpoint(file);

      try (Batch read =
          second.get(
              new long[] {20, 21},
              UnknownGenerations.of(new long[] {20, 21}),
              List.of("val"),
              allocator)) {
        assertThat(row(read.column("val"), 1)).containsExactly(2);
      }
      assertThatThrownBy(
              () ->
                  second.get(
                      new long[] {99},
                      UnknownGenerations.of(new long[] {99}),
                      List.of("val"),
                      allocator))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND));
      assertThat(second.stats().samples()).isEqualTo(2);
    }
  }

  @Test
  void AS039_loadOfAMissingOrCorruptFileChangesNothing(BufferAllocator allocator, @TempDir Path dir)
      throws IOException {
    try (StorageUnit unit = StorageUnitTest.unit(allocator, -1)) {
      StorageUnitTest.put(unit, new long[] {1}, Batch.builder().add("f", objects("kept")));
      Path corrupt = dir.resolve("corrupt.ckpt");
      Files.write(corrupt, new byte[] {0x54, 0x51, 0x53, 0x55, 1, 0, 0, 0, (byte) 0xff, 0x7f});

      assertThatThrownBy(() -> unit.loadCheckpoint(dir.resolve("does_not_exist")))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND))
          .hasMessageContaining("does_not_exist");
      assertThatThrownBy(() -> unit.loadCheckpoint(corrupt))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.CORRUPT_DATA));

      try (Batch read =
          unit.get(
              new long[] {1}, UnknownGenerations.of(new long[] {1}), List.of("f"), allocator)) {
        assertThat(((ObjectColumn) read.column("f")).get(0)).isEqualTo("kept");
      }
    }
  }

  @Test
  void AS040_managerLayout(BufferAllocator allocator, @TempDir Path dir) throws IOException {
    try (SimpleStorageManager manager = manager(allocator, 2)) {
      try (Batch batch = Batch.builder().add("f", objects(0L, 1L, 2L)).build()) {
        manager.put(batch, meta(List.of(), 0, 1, 2));
      }

      manager.saveCheckpoint(dir);

      Path base = dir.resolve("simple_storage");
      String u0 = manager.units().get(0).id();
      String u1 = manager.units().get(1).id();
      assertThat(base.resolve("su_0_" + u0 + ".ckpt")).exists();
      assertThat(base.resolve("su_1_" + u1 + ".ckpt")).exists();
      assertThat(Files.readString(base.resolve("storage_unit_info.json")))
          .isEqualTo(
              "[{\"position\": 0, \"storage_unit_id\": \""
                  + u0
                  + "\"}, {\"position\": 1, \"storage_unit_id\": \""
                  + u1
                  + "\"}]\n");
    }
  }

  @Test
  void AS041_managerLoadValidatesManifest(BufferAllocator allocator, @TempDir Path dir) {
    try (SimpleStorageManager two = manager(allocator, 2);
        SimpleStorageManager three = manager(allocator, 3)) {
      assertThatThrownBy(() -> three.loadCheckpoint(dir))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND))
          .hasMessageContaining("Storage unit manifest not found");

      two.saveCheckpoint(dir);

      assertThatThrownBy(() -> three.loadCheckpoint(dir))
          .hasMessageContaining(
              "Storage unit count mismatch: checkpoint has 2, current system has 3");
    }
  }

  @Test
  void AS042_restoreIsByPosition(BufferAllocator allocator, @TempDir Path dir) {
    try (SimpleStorageManager before = manager(allocator, 2);
        SimpleStorageManager after = manager(allocator, 2)) {
      Tensor values = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {6, 7}, 2);
      try (Batch batch = Batch.builder().dense("x", values).build()) {
        before.put(batch, meta(List.of(), 6, 7));
      }
      before.saveCheckpoint(dir);
      assertThat(after.units().get(1).id()).isNotEqualTo(before.units().get(1).id());

      after.loadCheckpoint(dir);

      assertThat(after.units().get(1).contains(7, List.of("x"))).isTrue();
      try (Batch read = after.get(meta(List.of("x"), 7, 6), allocator)) {
        assertThat(row(read.column("x"), 0)).containsExactly(7);
        assertThat(row(read.column("x"), 1)).containsExactly(6);
      }
    }
  }

  @Test
  void shouldLeaveEveryUnitUnchangedWhenOneFileIsMissing(
      BufferAllocator allocator, @TempDir Path dir) throws IOException {
    try (SimpleStorageManager saved = manager(allocator, 2);
        SimpleStorageManager target = manager(allocator, 2)) {
      try (Batch batch = Batch.builder().add("f", objects("a", "b")).build()) {
        saved.put(batch, meta(List.of(), 0, 1));
      }
      try (Batch batch = Batch.builder().add("f", objects("old0", "old1")).build()) {
        target.put(batch, meta(List.of(), 0, 1));
      }
      saved.saveCheckpoint(dir);
      Files.delete(
          dir.resolve("simple_storage").resolve("su_1_" + saved.units().get(1).id() + ".ckpt"));

      assertThatThrownBy(() -> target.loadCheckpoint(dir))
          .satisfies(e -> assertThat(codeOf(e)).isEqualTo(ErrorCode.NOT_FOUND))
          .hasMessageContaining(
              "Storage unit " + target.units().get(1).id() + " failed to load checkpoint");

      try (Batch read = target.get(meta(List.of("f"), 0, 1), allocator)) {
        assertThat(((ObjectColumn) read.column("f")).values()).containsExactly("old0", "old1");
      }
    }
  }
}
