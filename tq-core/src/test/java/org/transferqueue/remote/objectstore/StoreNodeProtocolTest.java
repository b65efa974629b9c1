package org.transferqueue.remote.objectstore;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.ProtocolException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.StoreStatistics;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.DocumentedLayouts;
import org.transferqueue.remote.ProtocolTables;
import org.transferqueue.remote.RemoteUnits;
import org.transferqueue.remote.Wire;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.InProcessExchange;
import org.transferqueue.transport.Request;

/**
 * Every store-node message type (300-311) encoded by {@link RemoteObjectStore}, decoded and
 * answered by the {@link StoreNodeServer} handlers of two nodes and decoded again by the store, in
 * this thread: no byte crosses a socket.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StoreNodeProtocolTest {
  private static final long SEGMENT = 1 << 20;
  private static final ReplicateConfig PLAIN = ReplicateConfig.DEFAULT;

  /** Two store nodes and their engines; closes both. */
  private static final class Nodes implements AutoCloseable {
    final List<EmbeddedObjectStore> engines = new ArrayList<>();
    final List<StoreNodeServer> servers = new ArrayList<>();
    final Map<HostPort, StoreNodeServer> byAddress = new HashMap<>();

    Nodes(BufferAllocator allocator) {
      for (int i = 0; i < 2; i++) {
        EmbeddedObjectStore engine = EmbeddedObjectStore.create(allocator, MasterConfig.DEFAULT);
        engines.add(engine);
        assertThat(
                engine.setup(
                    StoreConfig.builder()
                        .localHostname("node-" + i)
                        .globalSegmentSize(4 * SEGMENT)
                        .localBufferSize(SEGMENT)
                        .build()))
            .isZero();
        StoreNodeServer server = StoreNodeServer.start(engine, RemoteUnits.config(), allocator);
        servers.add(server);
        byAddress.put(server.address(), server);
      }
    }

    List<HostPort> addresses() {
      return servers.stream().map(StoreNodeServer::address).toList();
    }

    @Override
    public void close() {
      servers.reversed().forEach(StoreNodeServer::close);
      engines.reversed().forEach(EmbeddedObjectStore::close);
    }
  }

  private static MemorySegment filled(MemorySegment segment, int pattern) {
    segment.fill((byte) pattern);
    return segment;
  }

  private static boolean allBytes(MemorySegment segment, int pattern) {
    for (long i = 0; i < segment.byteSize(); i++) {
      if (segment.get(ValueLayout.JAVA_BYTE, i) != (byte) pattern) {
        return false;
      }
    }
    return true;
  }

  @Test
  void shouldEncodeAndDecodeEveryMessageTypeWithoutSockets(
      BufferAllocator allocator, @TempDir Path dir) {
    Set<Integer> sent = new TreeSet<>();
    DocumentedLayouts layouts = DocumentedLayouts.read();
    try (Nodes nodes = new Nodes(allocator);
        NativeBuffer arena = allocator.allocate(SEGMENT)) {
      RemoteObjectStore store =
          RemoteObjectStore.connect(
              nodes.addresses(),
              RemoteUnits.config(),
              allocator,
              (address, request, destination, timeout) -> {
                sent.add(request.type());
                return layouts.checking(
                    request,
                    InProcessExchange.respond(
                        nodes.byAddress.get(address).transport(), request, destination, allocator));
              });
      try (store) {
        assertThat(
                store.setup(
                    StoreConfig.builder()
                        .localHostname("client")
                        .globalSegmentSize(SEGMENT)
                        .localBufferSize(SEGMENT)
                        .build()))
            .isZero();
        assertThat(store.registerBuffer(arena.segment())).isZero();
        MemorySegment src = arena.segment().asSlice(0, 4096);
        MemorySegment dst = arena.segment().asSlice(8192, 8192);
        List<String> keys = List.of("a", "b", "c", "d", "x1", "x2");
        List<MemorySegment> sources = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
          sources.add(filled(arena.segment().asSlice(16384 + i * 1024L, 100 + i), i + 1));
        }
        // WRITE: per-key results, keys on both nodes
        assertThat(store.batchPutFrom(keys, sources, PLAIN)).containsOnly(0);
        assertThat(keys.stream().map(store::nodeOf).distinct().count()).isEqualTo(2);
        assertThat(store.putFrom("a", filled(src, 9), PLAIN)).isEqualTo(-705);
        assertThat(store.upsertFrom("a", filled(src, 9), PLAIN)).isZero();
        // STATS: each node counts its own objects
        long objects = 0;
        for (int node = 0; node < 2; node++) {
          StoreStatistics stats = store.nodeStatistics(node);
          assertThat(stats).isEqualTo(nodes.engines.get(node).statistics());
          assertThat(stats.capacityBytes()).isEqualTo(4 * SEGMENT);
          objects += stats.objects();
        }
        assertThat(objects).isEqualTo(keys.size());
        // READ into registered destinations, and the copy path
        assertThat(store.getInto("a", dst)).isEqualTo(4096);
        assertThat(allBytes(dst.asSlice(0, 4096), 9)).isTrue();
        assertThat(store.getInto("c", dst)).isEqualTo(102);
        assertThat(allBytes(dst.asSlice(0, 102), 3)).isTrue();
        try (NativeBuffer b = store.get("b")) {
          assertThat(b.lengthBytes()).isEqualTo(101);
          assertThat(allBytes(b.segment(), 2)).isTrue();
        }
        assertThat(store.getInto("missing", dst)).isEqualTo(-704);
        // EXIST, SIZE
        assertThat(store.batchIsExist(List.of("a", "missing", ""))).containsExactly(1, 0, -600);
        assertThat(store.getSize("d")).isEqualTo(103);
        assertThat(store.getSize("missing")).isNegative();
        // REMOVE (forced: the reads above hold leases), REMOVE_REGEX, REMOVE_ALL
        assertThat(store.batchRemove(List.of("a", "missing"), true)).containsExactly(0, -704);
        assertThat(store.removeByRegex("^x.*", false)).isEqualTo(2);
        assertThat(store.isExist("x1")).isZero();
        // SAVE_CHECKPOINT; PREPARE_LOAD then ABORT_LOAD changes nothing; PREPARE_LOAD, COMMIT_LOAD
        CheckpointDigests digests = CheckpointDigests.recording(dir);
        store.saveCheckpoint(dir, digests);
        CheckpointDigests expected = CheckpointDigests.expecting(dir, digests.recorded());
        assertThat(store.removeAll(true)).isEqualTo(3);
        assertThat(store.batchIsExist(List.of("b", "c", "d"))).containsOnly(0);
        StorageManager.PreparedLoad aborted = store.prepareLoadCheckpoint(dir, expected);
        assertThat(store.isExist("b")).isZero();
        aborted.close();
        assertThat(store.isExist("b")).isZero();
        try (StorageManager.PreparedLoad load = store.prepareLoadCheckpoint(dir, expected)) {
          load.commit();
        }
        assertThat(store.batchIsExist(List.of("b", "c", "d"))).containsOnly(1);
        try (NativeBuffer b = store.get("b")) {
          assertThat(allBytes(b.segment(), 2)).isTrue();
        }
        assertThat(store.removeAll(true)).isEqualTo(3);
        assertThat(store.batchIsExist(List.of("b", "c", "d"))).containsOnly(0);
        for (EmbeddedObjectStore engine : nodes.engines) {
          assertThat(engine.isExist("b")).isZero();
        }
      }
    }
    assertThat(sent).containsExactlyElementsOf(ProtocolTables.typeIds(StoreNodeProtocol.types()));
    assertThat(layouts.checked()).containsAll(sent);
  }

  @Test
  void shouldRejectKeysThatAreNotUtf8WhenAForeignClientSendsThem(BufferAllocator allocator) {
    // "k" then U+D800 encoded as if it were a code point: not UTF-8, so no key may be made of it.
    byte[] badKeys = {(byte) 0x91, (byte) 0xa4, 'k', (byte) 0xed, (byte) 0xa0, (byte) 0x80};
    try (Nodes nodes = new Nodes(allocator)) {
      StoreNodeServer server = nodes.servers.getFirst();
      byte[] write =
          ProtocolTables.concat(
              new Wire.Writer().array(5).bool(false).i64(1).bool(true).bool(false).toBytes(),
              badKeys);
      byte[] read =
          ProtocolTables.concat(
              new Wire.Writer().array(2).toBytes(),
              badKeys,
              new Wire.Writer().longs(new long[] {-1}).toBytes());
      byte[] exist = ProtocolTables.concat(new Wire.Writer().array(1).toBytes(), badKeys);
      byte[] remove =
          ProtocolTables.concat(new Wire.Writer().array(2).bool(true).toBytes(), badKeys);
      List<Request> requests =
          List.of(
              Request.of(
                  StoreNodeProtocol.WRITE.typeId(), write, MemorySegment.ofArray(new byte[8])),
              Request.of(StoreNodeProtocol.READ.typeId(), read),
              Request.of(StoreNodeProtocol.EXIST.typeId(), exist),
              Request.of(StoreNodeProtocol.REMOVE.typeId(), remove));
      for (Request request : requests) {
        assertThat(
                InProcessExchange.respond(
                    server.transport(),
                    request,
                    BodyDestination.allocateFrom(allocator),
                    allocator))
            .as("type %d", request.type())
            .failsWithin(Duration.ofSeconds(10))
            .withThrowableThat()
            .havingCause()
            .isInstanceOf(ProtocolException.class)
            .withMessageContaining("not valid UTF-8");
      }
      assertThat(nodes.engines.getFirst().removeAll(true)).as("no key was stored").isZero();
    }
  }

  @Test
  void shouldRejectMalformedMetadataOfEveryMessageTypeWithoutSockets(BufferAllocator allocator) {
    try (Nodes nodes = new Nodes(allocator)) {
      byte[] notAnArray = new Wire.Writer().str("not an array").toBytes();
      for (int type : ProtocolTables.typeIds(StoreNodeProtocol.types())) {
        assertThat(
                InProcessExchange.respond(
                    nodes.servers.getFirst().transport(),
                    Request.of(type, notAnArray),
                    BodyDestination.allocateFrom(allocator),
                    allocator))
            .as("type %d", type)
            .failsWithin(Duration.ofSeconds(10))
            .withThrowableThat()
            .havingCause()
            .isInstanceOf(ProtocolException.class);
      }
    }
  }
}
