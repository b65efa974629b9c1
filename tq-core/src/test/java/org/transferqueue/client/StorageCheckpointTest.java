package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.controller.ControllerState;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Checkpoint round trips and corruption cases on both storage backends: SimpleStorage and
 * MooncakeStore on its embedded engine (issue #7).
 */
class StorageCheckpointTest {
  @TempDir Path tmp;

  /** Dense, jagged and object fields through the key-value API, tags, and some consumption. */
  private static List<Long> populate(TransferQueueSystem tq) {
    BufferAllocator a = tq.allocator();
    try (Batch rows =
        Batch.builder()
            .dense("input_ids", Tensor.ofLongs(a, DType.INT64, new long[] {1, 2, 3, 4}, 2, 2))
            .objects("text", List.of("hello", Map.of("n", 7L)))
            .build()) {
      tq.kv()
          .batchPut(
              List.of("k0", "k1"), "p_tensor", rows, List.of(Map.of("idx", 0L), Map.of("idx", 1L)));
    }
    for (int i = 0; i < 3; i++) {
      float[] values = new float[i + 1];
      Arrays.fill(values, i + 0.5f);
      try (Tensor row = Tensor.ofFloats(a, DType.FLOAT32, values, i + 1);
          Batch b =
              Batch.builder()
                  .add("seq", JaggedColumn.copyOf(a, DType.FLOAT32, List.of(row)))
                  .build()) {
        tq.kv().put("j" + i, "p_jagged", b, Map.of("len", (long) i + 1));
      }
    }
    return tq.client()
        .getMeta(GetMetadataRequest.fetch("p_tensor", List.of("input_ids"), "actor", 1))
        .globalIndexes();
  }

  /** Every stored value, as comparable strings. */
  private static List<String> contents(TransferQueueSystem tq) {
    List<String> out = new ArrayList<>();
    out.add(String.valueOf(tq.client().listKeys(null)));
    try (Batch b =
        tq.kv().batchGet(List.of("k0", "k1"), "p_tensor", List.of("input_ids", "text"))) {
      Tensor ids = ((org.transferqueue.tensor.DenseColumn) b.column("input_ids")).tensor();
      out.add(Arrays.toString(ids.toLongArray()));
      out.add(String.valueOf(((ObjectColumn) b.column("text")).values()));
    }
    try (Batch b = tq.kv().batchGet(List.of("j0", "j1", "j2"), "p_jagged", List.of("seq"))) {
      JaggedColumn seq = (JaggedColumn) b.column("seq");
      for (int i = 0; i < 3; i++) {
        out.add(Arrays.toString(seq.row(i).toFloatArray()));
      }
    }
    return out;
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void D78_roundTripRestoresEveryValueAndStatus(Backend backend) {
    try (TransferQueueSystem tq = backend.fresh()) {
      List<Long> consumed = populate(tq);
      ControllerState saved = tq.controller().snapshotState();
      List<String> before = contents(tq);
      Path dir = tmp.resolve("ckpt");
      CheckpointResult result = tq.saveCheckpoint(dir, true);
      assertThat(result.storageSaved()).isTrue();
      if (backend == Backend.MOONCAKE_STORE) {
        assertThat(result.files())
            .extracting(CheckpointResult.CheckpointFile::path)
            .containsExactly(
                "controller_state.msgpack",
                "mooncake_store/node_0.ckpt",
                "mooncake_store/store_node_info.json");
      }

      for (String p : tq.client().getPartitionList()) {
        tq.client().clearPartition(p);
      }
      assertThat(tq.client().getPartitionList()).isEmpty();

      tq.loadCheckpoint(dir);
      assertThat(tq.controller().snapshotState()).isEqualTo(saved);
      assertThat(contents(tq)).isEqualTo(before);
      // consumption status came back too: the consumed sample is not served again
      List<Long> next =
          tq.client()
              .getMeta(GetMetadataRequest.fetch("p_tensor", List.of("input_ids"), "actor", 1))
              .globalIndexes();
      assertThat(next).hasSize(1).doesNotContainAnyElementsOf(consumed);
    }
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldLoadIntoAFreshSystemOfTheSameBackend(Backend backend) {
    Path dir = tmp.resolve("ckpt");
    List<String> before;
    ControllerState saved;
    try (TransferQueueSystem tq = backend.fresh()) {
      populate(tq);
      before = contents(tq);
      saved = tq.controller().snapshotState();
      tq.saveCheckpoint(dir, true);
    }
    try (TransferQueueSystem tq = backend.fresh()) {
      tq.loadCheckpoint(dir);
      assertThat(tq.controller().snapshotState()).isEqualTo(saved);
      assertThat(contents(tq)).isEqualTo(before);
    }
  }

  // ---- corruption: a clear error, and nothing changed ---------------------------------------

  private void assertLoadFailsUnchanged(
      Backend backend, Consumer<Path> corruption, ErrorCode code, String fragment) {
    try (TransferQueueSystem tq = backend.fresh()) {
      populate(tq);
      Path dir = tmp.resolve("ckpt");
      tq.saveCheckpoint(dir, true);
      // change the running system after the save, so that a partial load would show
      try (Batch nine = ids(tq.allocator(), 9)) {
        tq.kv().put("k9", "p_tensor", nine, Map.of());
      }
      tq.kv().clear(List.of("j2"), "p_jagged");
      ControllerState reference = tq.controller().snapshotState();
      String referenceKeys = String.valueOf(tq.client().listKeys(null));
      List<String> referenceData = readable(tq);
      corruption.accept(dir);
      assertThatThrownBy(() -> tq.loadCheckpoint(dir))
          .isInstanceOf(TqException.class)
          .hasMessageContaining(fragment)
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(code);
      assertThat(tq.controller().snapshotState()).isEqualTo(reference);
      assertThat(String.valueOf(tq.client().listKeys(null))).isEqualTo(referenceKeys);
      assertThat(readable(tq)).isEqualTo(referenceData);
    }
  }

  private static Batch ids(BufferAllocator a, long id) {
    return Batch.builder()
        .dense("input_ids", Tensor.ofLongs(a, DType.INT64, new long[] {id, id}, 1, 2))
        .objects("text", List.of("later"))
        .build();
  }

  /** The values still stored after the post-save changes. */
  private static List<String> readable(TransferQueueSystem tq) {
    List<String> out = new ArrayList<>();
    try (Batch b =
        tq.kv().batchGet(List.of("k0", "k1", "k9"), "p_tensor", List.of("input_ids", "text"))) {
      Tensor ids = ((org.transferqueue.tensor.DenseColumn) b.column("input_ids")).tensor();
      out.add(Arrays.toString(ids.toLongArray()));
      out.add(String.valueOf(((ObjectColumn) b.column("text")).values()));
    }
    try (Batch b = tq.kv().batchGet(List.of("j0", "j1"), "p_jagged", List.of("seq"))) {
      JaggedColumn seq = (JaggedColumn) b.column("seq");
      for (int i = 0; i < 2; i++) {
        out.add(Arrays.toString(seq.row(i).toFloatArray()));
      }
    }
    return out;
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectCorruptManifest(Backend backend) {
    assertLoadFailsUnchanged(
        backend,
        dir -> editManifest(dir, text -> text.replace("storage_saved true", "storage_saved tru")),
        ErrorCode.CORRUPT_DATA,
        "checksum does not match");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectMissingStorageFile(Backend backend) {
    assertLoadFailsUnchanged(
        backend, dir -> delete(dataFile(dir, backend)), ErrorCode.CORRUPT_DATA, "missing file");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectChecksumMismatchInStorageFile(Backend backend) {
    assertLoadFailsUnchanged(
        backend,
        dir -> {
          Path file = dataFile(dir, backend);
          flipByte(file, size(file) - 3); // inside the last cell's bytes: the structure is intact
        },
        ErrorCode.CORRUPT_DATA,
        "CRC32C");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectVersionFromTheFuture(Backend backend) {
    assertLoadFailsUnchanged(
        backend,
        dir -> editManifest(dir, text -> text.replace("TQ-CHECKPOINT 1", "TQ-CHECKPOINT 99")),
        ErrorCode.INVALID_ARGUMENT,
        "format version 99");
  }

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldRejectCheckpointOfTheOtherBackend(Backend backend) {
    Path dir = tmp.resolve("other");
    Backend other =
        backend == Backend.SIMPLE_STORAGE ? Backend.MOONCAKE_STORE : Backend.SIMPLE_STORAGE;
    try (TransferQueueSystem tq = other.fresh()) {
      populate(tq);
      tq.saveCheckpoint(dir, true);
    }
    assertLoadFailsUnchanged(
        backend,
        ignored -> {
          try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.toList()) {
              if (Files.isDirectory(f)) {
                copyTree(f, tmp.resolve("ckpt").resolve(f.getFileName()));
              } else {
                Files.copy(f, tmp.resolve("ckpt").resolve(f.getFileName()), REPLACE);
              }
            }
          } catch (IOException e) {
            throw new AssertionError(e);
          }
        },
        ErrorCode.INVALID_ARGUMENT,
        "cannot be loaded into");
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private static final java.nio.file.CopyOption REPLACE =
      java.nio.file.StandardCopyOption.REPLACE_EXISTING;

  private static void copyTree(Path from, Path to) throws IOException {
    Files.createDirectories(to);
    try (Stream<Path> files = Files.list(from)) {
      for (Path f : files.toList()) {
        Files.copy(f, to.resolve(f.getFileName()), REPLACE);
      }
    }
  }

  /** The storage file with the most data: unit 1 of SimpleStorage or the object store's node. */
  private static Path dataFile(Path dir, Backend backend) {
    if (backend == Backend.MOONCAKE_STORE) {
      return dir.resolve("mooncake_store/node_0.ckpt");
    }
    try (Stream<Path> files = Files.list(dir.resolve("simple_storage"))) {
      return files
          .filter(f -> f.getFileName().toString().startsWith("su_1_"))
          .findFirst()
          .orElseThrow();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static long size(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static void flipByte(Path file, long position) {
    try {
      byte[] bytes = Files.readAllBytes(file);
      bytes[(int) position] ^= 0x5a;
      Files.write(file, bytes);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static void delete(Path file) {
    try {
      Files.delete(file);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static void editManifest(Path dir, java.util.function.UnaryOperator<String> edit) {
    try {
      Path manifest = dir.resolve("MANIFEST");
      Files.writeString(manifest, edit.apply(Files.readString(manifest)));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
