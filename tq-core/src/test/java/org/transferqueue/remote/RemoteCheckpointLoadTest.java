package org.transferqueue.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.objectstore.RemoteObjectStore;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.checkpoint.FileDigest;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Checkpoint loads across storage servers run in two phases: every unit or node validates and
 * stages its own file, and only then do all of them apply it; one bad file leaves every server
 * unchanged.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RemoteCheckpointLoadTest {
  @TempDir Path tmp;

  // ---- storage units ---------------------------------------------------------------------------

  private static void put(RemoteUnits remote, BufferAllocator allocator, long... gis) {
    long[] values = new long[gis.length];
    int[] positions = new int[gis.length];
    for (int i = 0; i < gis.length; i++) {
      values[i] = gis[i] * 10;
      positions[i] = i;
    }
    try (Tensor t = Tensor.ofLongs(allocator, DType.INT64, values, gis.length);
        Batch batch = Batch.builder().dense("x", t).build()) {
      for (int u = 0; u < remote.units.size(); u++) {
        int unit = u;
        long[] mine =
            java.util.Arrays.stream(gis).filter(gi -> gi % remote.units.size() == unit).toArray();
        int[] rows =
            java.util.stream.IntStream.range(0, gis.length)
                .filter(i -> gis[i] % remote.units.size() == unit)
                .toArray();
        if (mine.length > 0) {
          RemoteCalls.join(
              remote
                  .manager
                  .units()
                  .get(u)
                  .putAsync(mine, new long[mine.length], batch, rows, 0, allocator));
        }
      }
    }
  }

  /** The content of every unit, as the digest of a scratch checkpoint file of it. */
  private List<FileDigest> unitStates(RemoteUnits remote) {
    List<FileDigest> out = new ArrayList<>();
    for (int u = 0; u < remote.units.size(); u++) {
      out.add(remote.units.get(u).saveCheckpoint(tmp.resolve("probe-unit-" + u)));
    }
    return out;
  }

  @Test
  void shouldPrepareOnEveryUnitThenCommit(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), update -> {})) {
      put(remote, allocator, 0, 1, 2, 3);
      List<FileDigest> saved = unitStates(remote);
      Path dir = tmp.resolve("ckpt");
      CheckpointDigests digests = CheckpointDigests.recording(dir);
      remote.manager.saveCheckpoint(dir, digests);
      assertThat(digests.recorded()).hasSize(2);

      put(remote, allocator, 4, 5);
      CheckpointDigests expected = CheckpointDigests.expecting(dir, digests.recorded());
      try (StorageManager.PreparedLoad load = remote.manager.prepareLoadCheckpoint(dir, expected)) {
        assertThat(remote.units.get(0).stats().samples()).isEqualTo(3); // nothing applied yet
        load.commit();
      }
      assertThat(unitStates(remote)).isEqualTo(saved);
      assertThat(digests.recorded().keySet()).allMatch(expected::isVerified);
    }
  }

  @Test
  void shouldLeaveEveryUnitUnchangedWhenTheFileOfUnitOneIsCorrupt(BufferAllocator allocator)
      throws IOException {
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), update -> {})) {
      put(remote, allocator, 0, 1, 2, 3);
      Path dir = tmp.resolve("ckpt");
      CheckpointDigests digests = CheckpointDigests.recording(dir);
      remote.manager.saveCheckpoint(dir, digests);
      put(remote, allocator, 4, 5, 6, 7);
      List<FileDigest> reference = unitStates(remote);
      Path unitOne;
      try (var files = Files.list(dir.resolve("simple_storage"))) {
        unitOne =
            files.filter(f -> f.getFileName().toString().startsWith("su_1_")).findFirst().get();
      }
      flipLastByte(unitOne);

      CheckpointDigests expected = CheckpointDigests.expecting(dir, digests.recorded());
      assertThatThrownBy(() -> remote.manager.prepareLoadCheckpoint(dir, expected))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
          .hasMessageContaining("storage unit 1")
          .hasMessageContaining("CRC32C");
      assertThat(unitStates(remote)).isEqualTo(reference);
    }
  }

  @Test
  void shouldDiscardStagedDataWhenClosedWithoutCommit(BufferAllocator allocator) {
    try (RemoteUnits remote = new RemoteUnits(allocator, 2, OptionalLong.empty(), update -> {})) {
      put(remote, allocator, 0, 1);
      Path dir = tmp.resolve("ckpt");
      remote.manager.saveCheckpoint(dir);
      put(remote, allocator, 2, 3);
      List<FileDigest> reference = unitStates(remote);
      remote.manager.prepareLoadCheckpoint(dir).close();
      assertThat(unitStates(remote)).isEqualTo(reference);
    }
  }

  // ---- object-store nodes ----------------------------------------------------------------------

  /** Two store nodes on loopback and a remote store over them. */
  private static final class Nodes implements AutoCloseable {
    final List<EmbeddedObjectStore> engines = new ArrayList<>();
    final List<StoreNodeServer> servers = new ArrayList<>();
    final RemoteObjectStore store;
    final NativeBuffer arena;

    Nodes(BufferAllocator allocator) {
      for (int i = 0; i < 2; i++) {
        EmbeddedObjectStore engine =
            EmbeddedObjectStore.create(allocator, MasterConfig.builder().asyncThreads(1).build());
        engines.add(engine);
        engine.setup(
            StoreConfig.builder()
                .localHostname("node-" + i)
                .globalSegmentSize(4 << 20)
                .localBufferSize(1 << 20)
                .build());
        servers.add(StoreNodeServer.start(engine, RemoteUnits.config(), allocator));
      }
      List<HostPort> nodes = servers.stream().map(StoreNodeServer::address).toList();
      store = RemoteObjectStore.connect(nodes, RemoteUnits.config(), allocator);
      store.setup(
          StoreConfig.builder()
              .localHostname("client")
              .globalSegmentSize(1 << 20)
              .localBufferSize(1 << 20)
              .build());
      arena = allocator.allocate(1 << 20);
      store.registerBuffer(arena.segment());
    }

    void put(String key, int pattern, ReplicateConfig config) {
      MemorySegment source = arena.segment().asSlice(0, 4096 + pattern);
      source.fill((byte) pattern);
      assertThat(store.upsertFrom(key, source, config)).isZero();
    }

    @Override
    public void close() {
      store.close();
      arena.close();
      servers.reversed().forEach(StoreNodeServer::close);
      engines.reversed().forEach(EmbeddedObjectStore::close);
    }
  }

  private List<FileDigest> nodeStates(Nodes nodes) {
    List<FileDigest> out = new ArrayList<>();
    for (int n = 0; n < nodes.engines.size(); n++) {
      out.add(nodes.engines.get(n).saveCheckpointFile(tmp.resolve("probe-node-" + n)));
    }
    return out;
  }

  private static List<String> keysOf(int count) {
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      keys.add(i + "@field");
    }
    return keys;
  }

  @Test
  void shouldRestoreEveryNodesObjectsAndPins(BufferAllocator allocator) {
    try (Nodes nodes = new Nodes(allocator)) {
      List<String> keys = keysOf(8);
      for (int i = 0; i < keys.size(); i++) {
        nodes.put(keys.get(i), i + 1, new ReplicateConfig(1, i % 2 == 0, false));
      }
      assertThat(keys.stream().map(nodes.store::nodeOf).distinct()).hasSize(2);
      List<FileDigest> saved = nodeStates(nodes);
      Path dir = tmp.resolve("ckpt");
      CheckpointDigests digests = CheckpointDigests.recording(dir);
      nodes.store.saveCheckpoint(dir, digests);
      assertThat(digests.recorded())
          .containsOnlyKeys("mooncake_store/node_0.ckpt", "mooncake_store/node_1.ckpt");

      nodes.store.removeAll(true);
      nodes.put("stranger", 3, ReplicateConfig.DEFAULT);
      CheckpointDigests expected = CheckpointDigests.expecting(dir, digests.recorded());
      try (StorageManager.PreparedLoad load = nodes.store.prepareLoadCheckpoint(dir, expected)) {
        assertThat(nodes.store.isExist(keys.getFirst())).isZero(); // staged, not applied
        load.commit();
      }
      assertThat(nodeStates(nodes)).isEqualTo(saved); // same keys, bytes and pins
      assertThat(nodes.store.isExist("stranger")).isZero();
      assertThat(nodes.store.getSize(keys.get(3))).isEqualTo(4096 + 4);
    }
  }

  @Test
  void shouldLeaveEveryNodeUnchangedWhenTheFileOfNodeOneIsCorrupt(BufferAllocator allocator)
      throws IOException {
    try (Nodes nodes = new Nodes(allocator)) {
      for (String key : keysOf(8)) {
        nodes.put(key, 5, ReplicateConfig.DEFAULT);
      }
      Path dir = tmp.resolve("ckpt");
      CheckpointDigests digests = CheckpointDigests.recording(dir);
      nodes.store.saveCheckpoint(dir, digests);
      nodes.store.removeAll(true);
      nodes.put("after", 9, ReplicateConfig.DEFAULT);
      List<FileDigest> reference = nodeStates(nodes);
      flipLastByte(dir.resolve("mooncake_store/node_1.ckpt"));

      CheckpointDigests expected = CheckpointDigests.expecting(dir, digests.recorded());
      assertThatThrownBy(() -> nodes.store.prepareLoadCheckpoint(dir, expected))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
          .hasMessageContaining("store node 1")
          .hasMessageContaining("CRC32C");
      assertThat(nodeStates(nodes)).isEqualTo(reference);
      assertThat(nodes.store.isExist("after")).isEqualTo(1);
    }
  }

  @Test
  void shouldRejectACheckpointOfAnotherNodeCount(BufferAllocator allocator) {
    try (Nodes nodes = new Nodes(allocator)) {
      Path dir = tmp.resolve("ckpt");
      nodes.put("k", 1, ReplicateConfig.DEFAULT);
      nodes.engines.getFirst().saveCheckpoint(dir, CheckpointDigests.recording(dir));
      assertThatThrownBy(() -> nodes.store.prepareLoadCheckpoint(dir, CheckpointDigests.none()))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining("node count mismatch");
      assertThat(nodes.store.isExist("k")).isEqualTo(1);
    }
  }

  private static void flipLastByte(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    bytes[bytes.length - 1] ^= 0x5a;
    Files.write(file, bytes);
  }
}
