package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.transferqueue.client.LoaderFixtures.ids;
import static org.transferqueue.client.LoaderFixtures.putIds;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.ControllerState;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.RankAwareSampler;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;

@ParameterizedClass
@EnumSource(Deployment.class)
class CheckpointTest {
  @TempDir Path tmp;

  @Parameter Deployment deployment;

  private TestSystem system() {
    return LoaderFixtures.system(deployment, new SequentialSampler(), 1);
  }

  /** Fills a system with dense, object and jagged fields, keys, tags and consumption. */
  private static void populate(TestSystem tq) {
    BufferAllocator a = tq.allocator();
    try (Batch rows =
        Batch.builder()
            .dense("input_ids", Tensor.ofLongs(a, DType.INT64, new long[] {1, 2, 3, 4}, 2, 2))
            .objects("text", List.of("hello", "world"))
            .build()) {
      tq.kv()
          .batchPut(
              List.of("k0", "k1"), "p_tensor", rows, List.of(Map.of("idx", 0L), Map.of("idx", 1L)));
    }
    for (int i = 0; i < 3; i++) {
      float[] values = new float[i + 1];
      for (int j = 0; j <= i; j++) {
        values[j] = j;
      }
      try (Tensor row = Tensor.ofFloats(a, DType.FLOAT32, values, i + 1);
          Batch b =
              Batch.builder()
                  .add("seq", JaggedColumn.copyOf(a, DType.FLOAT32, List.of(row)))
                  .build()) {
        tq.kv().put("j" + i, "p_jagged", b, Map.of("len", (long) i + 1));
      }
    }
    for (int p = 0; p < 3; p++) {
      putIds(tq.client(), a, "part_" + p, "input_ids", p * 10L, p * 10L + 1);
    }
    tq.client().getMeta(GetMetadataRequest.fetch("part_0", List.of("input_ids"), "actor", 1));
  }

  /** Everything readable, as comparable values. */
  private static List<Object> contents(TestSystem tq) {
    List<Object> out = new ArrayList<>();
    out.add(tq.client().listKeys(null));
    try (Batch b =
        tq.kv().batchGet(List.of("k0", "k1"), "p_tensor", List.of("input_ids", "text"))) {
      out.add(ids(b.selectFields("input_ids"), "input_ids").toString());
      out.add(((org.transferqueue.tensor.ObjectColumn) b.column("text")).values());
    }
    try (Batch b = tq.kv().batchGet(List.of("j0", "j1", "j2"), "p_jagged", List.of("seq"))) {
      JaggedColumn seq = (JaggedColumn) b.column("seq");
      for (int i = 0; i < 3; i++) {
        out.add(java.util.Arrays.toString(seq.row(i).toFloatArray()));
      }
    }
    for (int p = 0; p < 3; p++) {
      BatchMeta meta =
          tq.client().getMeta(GetMetadataRequest.forceFetch("part_" + p, List.of("input_ids")));
      try (Batch b = tq.client().getData(meta)) {
        out.add(ids(b, "input_ids"));
      }
    }
    return out;
  }

  @Test
  void D78_D83_roundTripRestoresControllerStateAndData() {
    try (TestSystem tq = system()) {
      populate(tq);
      ControllerState saved = tq.controller().snapshotState();
      List<Object> before = contents(tq);
      Path dir = tmp.resolve("ckpt");
      CheckpointResult result = tq.saveCheckpoint(dir, true);
      assertThat(result.storageSaved()).isTrue();
      assertThat(result.backend()).isEqualTo("SimpleStorage");
      assertThat(result.files())
          .extracting(CheckpointResult.CheckpointFile::path)
          .hasSize(4)
          .contains("controller_state.msgpack", "simple_storage/storage_unit_info.json")
          .anyMatch(f -> f.matches("simple_storage/su_0_TQ_STORAGE_UNIT_\\w+\\.ckpt"))
          .anyMatch(f -> f.matches("simple_storage/su_1_TQ_STORAGE_UNIT_\\w+\\.ckpt"));
      assertThat(dir.resolve("MANIFEST")).exists();

      for (String p : tq.client().getPartitionList()) {
        tq.client().clearPartition(p);
      }
      putIds(tq.client(), tq.allocator(), "later", 99);
      assertThat(tq.client().getPartitionList()).containsExactly("later");

      tq.loadCheckpoint(dir);
      assertThat(tq.controller().snapshotState()).isEqualTo(saved);
      assertThat(contents(tq)).isEqualTo(before);
      BatchMeta fresh = putIds(tq.client(), tq.allocator(), "new", 7);
      assertThat(
              saved.allocator().owners().values().stream()
                  .anyMatch(s -> s.contains(fresh.globalIndex(0))))
          .isFalse();
    }
  }

  @Test
  void J4_rankAwareCacheSurvivesRoundTrip() {
    try (TestSystem tq = LoaderFixtures.system(deployment, new RankAwareSampler(), 1)) {
      putIds(tq.client(), tq.allocator(), "p", 0, 1, 2, 3);
      GetMetadataRequest first =
          GetMetadataRequest.fetch("p", List.of("meta_idx"), "t", 2)
              .withSamplingConfig(SamplingConfig.of(0, 0));
      List<Long> served = tq.client().getMeta(first).globalIndexes();
      tq.saveCheckpoint(tmp.resolve("c"), true);
      tq.client().clearPartition("p");
      tq.loadCheckpoint(tmp.resolve("c"));
      assertThat(tq.client().getMeta(first).globalIndexes()).isEqualTo(served);
    }
  }

  @Test
  void shouldReplaceAnExistingCheckpointWhenSavingTwice() {
    try (TestSystem tq = system()) {
      Path dir = tmp.resolve("ckpt");
      putIds(tq.client(), tq.allocator(), "first", 1);
      tq.saveCheckpoint(dir, true);
      putIds(tq.client(), tq.allocator(), "second", 2);
      tq.saveCheckpoint(dir, true);
      tq.client().clearPartition("first");
      tq.client().clearPartition("second");
      tq.loadCheckpoint(dir);
      assertThat(tq.client().getPartitionList()).containsExactly("first", "second");
      assertThat(siblings()).containsExactly("ckpt");
    }
  }

  // ---- corruption: each case must fail with a clear code and leave the system unchanged -----

  private void assertLoadFailsUnchanged(
      Consumer<Path> corruption, ErrorCode code, String fragment) {
    try (TestSystem tq = system()) {
      populate(tq);
      Path dir = tmp.resolve("ckpt");
      tq.saveCheckpoint(dir, true);
      tq.client().clearPartition("part_1");
      putIds(tq.client(), tq.allocator(), "after", "input_ids", 5, 6);
      ControllerState reference = tq.controller().snapshotState();
      List<Object> referenceData = contentsWithout(tq, "part_1");
      corruption.accept(dir);
      assertThatThrownBy(() -> tq.loadCheckpoint(dir))
          .isInstanceOf(TqException.class)
          .hasMessageContaining(fragment)
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(code);
      assertThat(tq.controller().snapshotState()).isEqualTo(reference);
      assertThat(contentsWithout(tq, "part_1")).isEqualTo(referenceData);
    }
  }

  private static List<Object> contentsWithout(TestSystem tq, String skip) {
    List<Object> out = new ArrayList<>();
    for (String p : tq.client().getPartitionList()) {
      if (p.equals(skip)) {
        continue;
      }
      BatchMeta meta = tq.controller().getPartitionMeta(p).orElseThrow();
      for (String field : meta.fieldNames()) {
        try (Batch b = tq.client().getData(meta.selectFields(List.of(field)))) {
          out.add(p + "/" + field + "=" + b.column(field));
        }
      }
    }
    return out;
  }

  @Test
  void shouldRejectFlippedByteInControllerState() {
    assertLoadFailsUnchanged(
        dir -> flipByte(dir.resolve("controller_state.msgpack"), 10),
        ErrorCode.CORRUPT_DATA,
        "CRC32C");
  }

  @Test
  void shouldRejectFlippedByteInStorageFile() {
    assertLoadFailsUnchanged(
        dir -> flipByte(unitFile(dir, 1), 20), ErrorCode.CORRUPT_DATA, "simple_storage/su_1_");
  }

  @Test
  void shouldRejectTruncatedStorageFile() {
    assertLoadFailsUnchanged(
        dir -> truncate(unitFile(dir, 0), 7), ErrorCode.CORRUPT_DATA, "truncated");
  }

  @Test
  void shouldRejectMissingFile() {
    assertLoadFailsUnchanged(
        dir -> delete(dir.resolve("controller_state.msgpack")),
        ErrorCode.CORRUPT_DATA,
        "missing file");
  }

  @Test
  void shouldRejectWrongFormatVersion() {
    assertLoadFailsUnchanged(
        dir ->
            rewriteManifest(dir, text -> text.replace("TQ-CHECKPOINT 1", "TQ-CHECKPOINT 2"), false),
        ErrorCode.INVALID_ARGUMENT,
        "format version 2");
  }

  @Test
  void shouldRejectForeignFile() {
    assertLoadFailsUnchanged(
        dir -> rewriteManifest(dir, text -> "PK\u0003\u0004 zip\n", false),
        ErrorCode.INVALID_ARGUMENT,
        "not a checkpoint manifest");
  }

  @Test
  void shouldRejectEditedManifest() {
    assertLoadFailsUnchanged(
        dir ->
            rewriteManifest(
                dir, text -> text.replace("backend SimpleStorage", "backend Simple"), false),
        ErrorCode.CORRUPT_DATA,
        "checksum does not match");
  }

  @Test
  void shouldRejectMalformedStorageFileEvenWithMatchingChecksums() {
    // A foreign writer: the unit file's magic is wrong although the manifest agrees with it.
    assertLoadFailsUnchanged(
        dir -> {
          flipByte(unitFile(dir, 1), 0);
          rewriteManifest(dir, text -> text, true);
        },
        ErrorCode.CORRUPT_DATA,
        "bad magic");
  }

  @Test
  void shouldRejectMalformedControllerStateEvenWithMatchingChecksums() {
    assertLoadFailsUnchanged(
        dir -> {
          write(
              dir.resolve("controller_state.msgpack"),
              new byte[] {(byte) 0x81, (byte) 0xa1, 'x', 1});
          rewriteManifest(dir, text -> text, true);
        },
        ErrorCode.CORRUPT_DATA,
        "controller state");
  }

  @Test
  void D87_shouldRejectUnitCountMismatch() {
    Path dir = tmp.resolve("ckpt");
    try (TestSystem tq = system()) {
      putIds(tq.client(), tq.allocator(), "p", 1, 2);
      tq.saveCheckpoint(dir, true);
    }
    try (TestSystem three =
        LoaderFixtures.system(
            deployment,
            new SequentialSampler(),
            1,
            b -> b.backend(x -> x.simpleStorage(s -> s.numDataStorageUnits(3))))) {
      assertThatThrownBy(() -> three.loadCheckpoint(dir))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("count mismatch: checkpoint has 2, current system has 3")
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.INVALID_ARGUMENT);
      assertThat(three.client().getPartitionList()).isEmpty();
    }
  }

  @Test
  void shouldRejectCheckpointOfAnotherSamplerAndDiscardStagedData() {
    Path dir = tmp.resolve("seq");
    try (TestSystem tq = system()) {
      populate(tq);
      tq.saveCheckpoint(dir, true);
    }
    try (TestSystem other = LoaderFixtures.system(deployment, new RankAwareSampler(), 1)) {
      putIds(other.client(), other.allocator(), "mine", 1, 2);
      ControllerState reference = other.controller().snapshotState();
      assertThatThrownBy(() -> other.loadCheckpoint(dir))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("SequentialSampler")
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
      assertThat(other.controller().snapshotState()).isEqualTo(reference);
      try (Batch b = other.kv().batchGet(List.of("k0"), "p_tensor", null)) {
        throw new AssertionError("unexpected data " + b);
      } catch (TqException expected) {
        assertThat(expected.code()).isEqualTo(ErrorCode.UNKNOWN_KEY);
      }
    }
  }

  @Test
  void D86_shouldReportMissingDirectoryAndManifest() throws IOException {
    try (TestSystem tq = system()) {
      assertThatThrownBy(() -> tq.loadCheckpoint(tmp.resolve("nope")))
          .isInstanceOf(TqException.class)
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.NOT_FOUND);
      Files.createDirectory(tmp.resolve("empty"));
      assertThatThrownBy(() -> tq.loadCheckpoint(tmp.resolve("empty")))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("MANIFEST");
    }
  }

  // ---- atomicity and backends without checkpoints ---------------------------------------------

  @Test
  void D88_failedSaveLeavesNoPartialDirectoryAndKeepsTheOldCheckpoint() {
    // The failing storage manager is injected into an embedded system's registry.
    assumeTrue(deployment == Deployment.EMBEDDED, "storage manager injected in-process");
    try (TransferQueueSystem tq = systemWith("SimpleStorage", true)) {
      putIds(tq.client(), tq.allocator(), "p", 1, 2);
      Path dir = tmp.resolve("ck");
      assertThatThrownBy(() -> tq.saveCheckpoint(dir, true))
          .hasMessageContaining("simulated dump failure");
      assertThat(siblings()).isEmpty();
    }
    try (TestSystem tq = system()) {
      putIds(tq.client(), tq.allocator(), "kept", 1);
      tq.saveCheckpoint(tmp.resolve("ck"), true);
    }
    try (TransferQueueSystem tq = systemWith("SimpleStorage", true)) {
      assertThatThrownBy(() -> tq.saveCheckpoint(tmp.resolve("ck"), true))
          .hasMessageContaining("simulated dump failure");
      assertThat(siblings()).containsExactly("ck");
    }
    try (TestSystem tq = system()) {
      tq.loadCheckpoint(tmp.resolve("ck"));
      assertThat(tq.client().getPartitionList()).containsExactly("kept");
    }
  }

  @Test
  void shouldReportStorageNotSavedForBackendWithoutCheckpoints() {
    // The storage manager without checkpoints is injected into an embedded system's registry.
    assumeTrue(deployment == Deployment.EMBEDDED, "storage manager injected in-process");
    try (TransferQueueSystem tq = systemWith("MooncakeStore", false)) {
      putIds(tq.client(), tq.allocator(), "p", 1, 2);
      ControllerState saved = tq.controller().snapshotState();
      CheckpointResult result = tq.saveCheckpoint(tmp.resolve("kv"), true);
      assertThat(result.storageSaved()).isFalse();
      assertThat(result.backend()).isEqualTo("MooncakeStore");
      assertThat(result.files())
          .extracting(CheckpointResult.CheckpointFile::path)
          .containsExactly("controller_state.msgpack");
      putIds(tq.client(), tq.allocator(), "later", 3);
      tq.loadCheckpoint(tmp.resolve("kv"));
      assertThat(tq.controller().snapshotState()).isEqualTo(saved);
    }
  }

  @Test
  void shouldRefuseCheckpointsOnClosedSystem() {
    TestSystem tq = system();
    tq.close();
    assertThatThrownBy(() -> tq.saveCheckpoint(tmp.resolve("x"), true))
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.CLOSED);
    assertThatThrownBy(() -> tq.loadCheckpoint(tmp.resolve("x")))
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.CLOSED);
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private List<String> siblings() {
    try (Stream<Path> list = Files.list(tmp)) {
      return list.map(p -> p.getFileName().toString()).sorted().toList();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private static final TqConfig CONFIG =
      TqConfig.builder().controller(c -> c.pollingMode(true)).build();

  /** A system whose storage reports {@code name} and either fails saves or has no checkpoints. */
  private static TransferQueueSystem systemWith(String name, boolean failingSave) {
    StorageManagerRegistry registry =
        StorageManagerRegistry.builder()
            .register(
                StorageManagerRegistry.SIMPLE_STORAGE,
                context ->
                    new Wrapped(
                        SimpleStorageManager.create(context, ConfigMapper.simpleStorage(CONFIG)),
                        name,
                        failingSave))
            .build();
    return TransferQueueSystem.builder()
        .config(CONFIG)
        .storageBackends(registry)
        .leakPolicy(LeakPolicy.THROW)
        .start();
  }

  /** Delegates data operations; fails checkpoint saves or has no checkpoint support. */
  private record Wrapped(SimpleStorageManager delegate, String name, boolean failingSave)
      implements StorageManager {
    @Override
    public String backendName() {
      return name;
    }

    @Override
    public PutResult put(Batch batch, BatchMeta meta) {
      return delegate.put(batch, meta);
    }

    @Override
    public Batch get(BatchMeta meta, BufferAllocator allocator) {
      return delegate.get(meta, allocator);
    }

    @Override
    public ClearResult clear(BatchMeta meta) {
      return delegate.clear(meta);
    }

    @Override
    public void saveCheckpoint(Path directory, CheckpointDigests digests) {
      if (!failingSave) {
        StorageManager.super.saveCheckpoint(directory, digests);
      }
      delegate.saveCheckpoint(directory, digests);
      throw new StorageException(ErrorCode.STORAGE_ERROR, "simulated dump failure");
    }

    @Override
    public void close() {
      delegate.close();
    }
  }

  /** The unit file of a routing position (its name carries the unit id of the saving system). */
  private static Path unitFile(Path dir, int position) {
    try (Stream<Path> files = Files.list(dir.resolve("simple_storage"))) {
      return files
          .filter(f -> f.getFileName().toString().startsWith("su_" + position + "_"))
          .findFirst()
          .orElseThrow();
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

  private static void truncate(Path file, int bytes) {
    try {
      byte[] all = Files.readAllBytes(file);
      Files.write(file, java.util.Arrays.copyOf(all, all.length - bytes));
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

  private static void write(Path file, byte[] bytes) {
    try {
      Files.write(file, bytes);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * Rewrites the manifest; with {@code resign} the file sizes, checksums and the manifest checksum
   * are recomputed from the files as they are now (a writer that produced bad content).
   */
  private static void rewriteManifest(
      Path dir, java.util.function.UnaryOperator<String> edit, boolean resign) {
    try {
      Path manifest = dir.resolve("MANIFEST");
      String text = edit.apply(Files.readString(manifest));
      if (resign) {
        StringBuilder out = new StringBuilder();
        for (String line : text.split("\n")) {
          if (line.startsWith("manifest_crc32c ")) {
            continue;
          }
          if (line.startsWith("file ")) {
            String path = line.split(" ")[1];
            Path f = dir.resolve(path);
            line =
                "file "
                    + path
                    + " "
                    + Files.size(f)
                    + " "
                    + String.format("%08x", Checkpoints.crc32c(f));
          }
          out.append(line).append('\n');
        }
        CRC32C crc = new CRC32C();
        crc.update(out.toString().getBytes(StandardCharsets.UTF_8));
        out.append("manifest_crc32c ").append(String.format("%08x", crc.getValue())).append('\n');
        text = out.toString();
      }
      Files.writeString(manifest, text);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
