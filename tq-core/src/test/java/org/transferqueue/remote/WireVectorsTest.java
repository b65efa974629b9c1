package org.transferqueue.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.Clock;
import org.transferqueue.TqException;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.config.HostPort;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.ControllerState;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.TagUpdate;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.controller.RemoteController;
import org.transferqueue.remote.objectstore.RemoteObjectStore;
import org.transferqueue.remote.objectstore.StoreNodeProtocol;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.remote.storage.RemoteStorageUnit;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.remote.storage.UnitRows;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.storage.checkpoint.FileDigest;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;
import org.transferqueue.transport.SharedRequestLayoutTest;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * The wire test vectors: the exact frames the Java clients and servers exchange for every message
 * type of docs/PROTOCOL.md, recorded by a proxy between the real remote classes ({@link
 * RemoteController}, {@link RemoteStorageUnit}, {@link RemoteObjectStore}, the transport) and real
 * servers over loopback, and committed under {@code python/tests/vectors/v1/} with a manifest. The
 * Python client's tests decode each vector and re-encode it to the same bytes, so a change of the
 * wire format fails both suites: this test fails when the committed files differ from what the Java
 * side produces now. After an intended wire change, regenerate them with {@code mvn -pl tq-core
 * test -Dtest=WireVectorsTest -Dtq.vectors.write=true} and let the Python tests catch up.
 *
 * <p>Every input is fixed (a stopped controller clock, a fixed controller id, fixed tokens, one
 * connection per server, calls one after the other), so the frames are the same in every run; the
 * frames whose content varies are marked inexact in the manifest and compared by their header only:
 * the heap counter of a PROCESS_STATS reply, and the controller state of SNAPSHOT_STATE and
 * RESTORE_STATE, whose maps another JVM may encode in another order.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WireVectorsTest {
  static final Path VECTORS = Path.of("..", "python", "tests", "vectors", "v1");
  private static final Duration CALL = Duration.ofSeconds(20);
  private static final String TOKEN = "s3cret";

  /**
   * A controller clock whose wall time stands still and whose monotonic time moves one second per
   * reading, so that a blocking fetch's deadline passes at its first re-check whatever the
   * machine's speed, and nothing the controller replies depends on when the test ran.
   */
  private static Clock steppingClock() {
    java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
    return new Clock() {
      @Override
      public long nanoTime() {
        return now.addAndGet(1_000_000_000L);
      }

      @Override
      public long epochMillis() {
        return 1_700_000_000_000L;
      }
    };
  }

  /** One recorded frame. */
  record Vector(String label, boolean request, byte[] bytes, boolean exact) {
    int type() {
      return Short.toUnsignedInt(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getShort(6));
    }

    int flags() {
      return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(8);
    }

    long correlationId() {
      return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong(16);
    }

    String kind() {
      return request ? "request" : (flags() & FrameDescriptor.FLAG_ERROR) != 0 ? "error" : "reply";
    }
  }

  /** Collects frames in arrival order under the label of the call in progress. */
  static final class Recorder {
    private final List<Vector> vectors = new ArrayList<>();
    private String label = "connect";
    private boolean exactRequests = true;
    private boolean exactReplies = true;

    synchronized void label(String label) {
      set(label, true, true);
    }

    /** A call whose reply's content varies from run to run (compared by its header only). */
    synchronized void inexactReply(String label) {
      set(label, true, false);
    }

    /**
     * A call whose request and reply carry the controller state, whose maps the controller may
     * encode in another order in another JVM (compared by their header only).
     */
    synchronized void inexact(String label) {
      set(label, false, false);
    }

    private void set(String label, boolean requests, boolean replies) {
      this.label = label;
      this.exactRequests = requests;
      this.exactReplies = replies;
    }

    synchronized void add(boolean request, byte[] frame) {
      int type =
          Short.toUnsignedInt(ByteBuffer.wrap(frame).order(ByteOrder.LITTLE_ENDIAN).getShort(6));
      String name = type == 1 && !label.startsWith("HELLO") ? "HELLO" : label;
      boolean exact = type == 1 || (request ? exactRequests : exactReplies);
      vectors.add(new Vector(name, request, frame, exact));
    }

    synchronized List<Vector> vectors() {
      return List.copyOf(vectors);
    }
  }

  /**
   * A loopback proxy in front of one server: copies bytes both ways and records every whole frame
   * (header, metadata section, padding, body).
   */
  static final class RecordingProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final HostPort target;
    private final Recorder recorder;
    private final List<Socket> sockets = new ArrayList<>();

    RecordingProxy(HostPort target, Recorder recorder) throws IOException {
      this.target = target;
      this.recorder = recorder;
      this.listener = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
      Thread.ofVirtual().start(this::accept);
    }

    HostPort address() {
      return new HostPort("127.0.0.1", listener.getLocalPort());
    }

    private void accept() {
      try {
        while (true) {
          Socket client = listener.accept();
          Socket server = new Socket(target.host(), target.port());
          client.setTcpNoDelay(true);
          server.setTcpNoDelay(true);
          synchronized (sockets) {
            sockets.add(client);
            sockets.add(server);
          }
          Thread.ofVirtual().start(() -> pump(client, server, true));
          Thread.ofVirtual().start(() -> pump(server, client, false));
        }
      } catch (IOException closed) {
        // The listener was closed: the proxy is done.
      }
    }

    private void pump(Socket from, Socket to, boolean request) {
      try (InputStream in = from.getInputStream()) {
        OutputStream out = to.getOutputStream();
        while (true) {
          byte[] header = in.readNBytes(FrameDescriptor.HEADER_LENGTH);
          if (header.length < FrameDescriptor.HEADER_LENGTH) {
            break;
          }
          ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
          int metadata = h.getInt(12);
          long body = h.getLong(24);
          long rest = FrameDescriptor.bodyOffset(metadata) - FrameDescriptor.HEADER_LENGTH + body;
          byte[] tail = in.readNBytes(Math.toIntExact(rest));
          byte[] frame = Arrays.copyOf(header, header.length + tail.length);
          System.arraycopy(tail, 0, frame, header.length, tail.length);
          recorder.add(request, frame);
          out.write(frame);
          out.flush();
        }
      } catch (IOException e) {
        // A side closed the connection: stop copying, as a peer would.
      } finally {
        try {
          to.shutdownOutput();
        } catch (IOException ignored) {
          // already closed
        }
      }
    }

    @Override
    public void close() throws IOException {
      listener.close();
      synchronized (sockets) {
        for (Socket s : sockets) {
          s.close();
        }
      }
    }
  }

  /** The controller with a fixed id (a new one draws a random id), restored from its own state. */
  private static Controller fixedId(Controller controller) {
    ControllerState s = controller.snapshotState();
    controller.restoreState(
        new ControllerState(
            "TQ_CONTROLLER_0000002a",
            s.partitions(),
            s.allocator(),
            s.samplerType(),
            s.samplerState()));
    return controller;
  }

  /**
   * Shared memory off: the committed vectors are the socket frames (shared-memory frames carry a
   * random segment key and descriptor numbers, so they could not be compared byte for byte).
   */
  private static TransportConfig.Builder transport() {
    return TransportConfig.builder()
        .sharedMemory(false)
        .bindHost("127.0.0.1")
        .bindPort(0)
        .connectTimeout(Duration.ofSeconds(5))
        .defaultCallTimeout(CALL)
        .connectionsPerPeer(1)
        .shutdownGracePeriod(Duration.ofSeconds(1));
  }

  /** Fills a tensor's bytes with a fixed pattern (booleans 0 and 1). */
  private static Tensor filled(BufferAllocator allocator, DType dtype, int salt, long... shape) {
    Tensor t = Tensor.allocate(allocator, dtype, shape);
    MemorySegment s = t.segment();
    for (long i = 0; i < s.byteSize(); i++) {
      byte b = dtype == DType.BOOL ? (byte) ((i + salt) & 1) : (byte) (i * 37 + salt * 11 + 3);
      s.set(ValueLayout.JAVA_BYTE, i, b);
    }
    return t;
  }

  private static long[] longs(long... values) {
    return values;
  }

  /** Runs the scenario and returns the frames in order. */
  private static List<Vector> record(BufferAllocator allocator, Path scratch) throws Exception {
    Files.createDirectories(scratch);
    Recorder rec = new Recorder();
    List<AutoCloseable> open = new ArrayList<>();
    try {
      Controller controller =
          new Controller(
              ControllerOptions.builder()
                  .preallocSampleNum(2)
                  .fetchTimeout(Duration.ofMillis(200))
                  .build(),
              new SequentialSampler(),
              steppingClock());
      ControllerServer controllerServer =
          ControllerServer.start(fixedId(controller), transport().build(), allocator);
      open.add(controllerServer);
      StorageUnit unit =
          new StorageUnit(
              "TQ_STORAGE_UNIT_0", java.util.OptionalLong.empty(), allocator, Long.MAX_VALUE);
      open.add(unit);
      StorageUnitServer unitServer = StorageUnitServer.start(unit, transport().build(), allocator);
      open.add(unitServer);
      EmbeddedObjectStore engine =
          EmbeddedObjectStore.create(allocator, MasterConfig.builder().asyncThreads(1).build());
      open.add(engine::closeStore);
      assertThat(
              engine.setup(
                  StoreConfig.builder()
                      .localHostname("node-0")
                      .globalSegmentSize(8L << 20)
                      .localBufferSize(1L << 20)
                      .build()))
          .isZero();
      StoreNodeServer nodeServer = StoreNodeServer.start(engine, transport().build(), allocator);
      open.add(nodeServer);
      Controller guarded =
          new Controller(
              ControllerOptions.builder().build(), new SequentialSampler(), steppingClock());
      ControllerServer tokenServer =
          ControllerServer.start(fixedId(guarded), transport().authToken(TOKEN).build(), allocator);
      open.add(tokenServer);

      RecordingProxy controllerProxy = new RecordingProxy(controllerServer.address(), rec);
      RecordingProxy unitProxy = new RecordingProxy(unitServer.address(), rec);
      RecordingProxy nodeProxy = new RecordingProxy(nodeServer.address(), rec);
      RecordingProxy tokenProxy = new RecordingProxy(tokenServer.address(), rec);
      open.add(controllerProxy);
      open.add(unitProxy);
      open.add(nodeProxy);
      open.add(tokenProxy);

      TransportClient client = new TransportClient(transport().build(), allocator);
      open.add(client);
      controllerScenario(rec, new RemoteController(client, controllerProxy.address(), CALL, CALL));
      transportScenario(rec, client, controllerProxy.address());
      unitScenario(
          rec, new RemoteStorageUnit(client, unitProxy.address(), CALL), allocator, scratch);
      nodeScenario(rec, client, nodeProxy.address(), allocator, scratch);

      rec.label("HELLO with token");
      try (TransportClient withToken =
          new TransportClient(transport().authToken(TOKEN).build(), allocator)) {
        withToken.ping(tokenProxy.address(), CALL);
      }
      rec.label("HELLO with a wrong token: UNAUTHENTICATED");
      try (TransportClient wrong =
          new TransportClient(transport().authToken("wrong").build(), allocator)) {
        assertThatThrownBy(() -> wrong.ping(tokenProxy.address(), CALL))
            .isInstanceOf(TqException.class);
      }
      // Let the proxies record the last frames before they close.
      Thread.sleep(200);
      return rec.vectors();
    } finally {
      for (AutoCloseable c : open.reversed()) {
        c.close();
      }
    }
  }

  private static final FieldSchema F32_2 = FieldSchema.regular(DType.FLOAT32, 2);

  private static void controllerScenario(Recorder rec, RemoteController c) {
    rec.label("CONTROLLER_ID");
    assertThat(c.controllerId()).isEqualTo("TQ_CONTROLLER_0000002a");
    rec.label("METRICS_ENDPOINT");
    c.metricsEndpoint();
    rec.label("CREATE_PARTITION");
    c.createPartition("train");
    rec.label("LIST_PARTITIONS");
    c.listPartitions();
    rec.label("PARTITION_INDEX_RANGE");
    c.getPartitionIndexRange("train");
    rec.label("GET_METADATA insert");
    BatchMeta slots = c.getMetadata(GetMetadataRequest.insert("train", List.of("x", "y"), 3));
    long[] gis = slots.globalIndexArray();
    long[] gens = slots.generationArray();
    Map<String, FieldSchema> schema = new LinkedHashMap<>();
    schema.put("x", F32_2);
    schema.put(
        "y", FieldSchema.nestedOf(DType.INT64, List.of(List.of(1L), List.of(2L, 3L), List.of(0L))));
    schema.put("z", FieldSchema.nonTensorField());
    rec.label("CHECK_PUT");
    c.checkPut("train", schema, gis, gens);
    Map<Long, Map<String, Object>> backend = new LinkedHashMap<>();
    backend.put(gis[0], Map.of("z", Map.of("packed_size", 17L)));
    rec.label("UPDATE_PRODUCTION");
    c.updateProductionStatus(
        new ProductionUpdate(
            "train", slots.globalIndexes(), schema, backend, Arrays.stream(gens).boxed().toList()));
    rec.label("UPDATE_PRODUCTION stale generation: STALE_METADATA");
    assertThatThrownBy(
            () ->
                c.updateProductionStatus(
                    new ProductionUpdate(
                        "train",
                        List.of(gis[0]),
                        Map.of("x", F32_2),
                        Map.of(),
                        List.of(gens[0] + 5))))
        .isInstanceOf(TqException.class);
    rec.label("GET_PRODUCTION");
    c.getProductionStatus("train", List.of("x", "y"));
    rec.label("GET_PRODUCTION unknown partition");
    c.getProductionStatus("nowhere", List.of("x"));
    rec.label("SCAN_READY");
    c.scanReady("train", List.of("x"), "actor");
    rec.label("GET_METADATA fetch with sampling config");
    c.getMetadata(
        new GetMetadataRequest(
            FetchMode.FETCH,
            "train",
            List.of("x", "z"),
            "actor",
            2,
            new SamplingConfig(0, 1, Map.of("temperature", 0.5)),
            Duration.ofSeconds(2)));
    rec.label("GET_METADATA fetch that times out: DEADLINE_EXCEEDED");
    assertThatThrownBy(
            () ->
                c.getMetadata(
                    new GetMetadataRequest(
                        FetchMode.FETCH,
                        "train",
                        List.of("x"),
                        "actor",
                        5,
                        SamplingConfig.NONE,
                        Duration.ofMillis(50))))
        .isInstanceOf(TqException.class);
    rec.label("GET_METADATA force_fetch");
    c.getMetadata(GetMetadataRequest.forceFetch("train", List.of("x")));
    rec.label("GET_METADATA fetch with a token budget");
    c.getMetadata(
        GetMetadataRequest.fetchTokens("train", List.of("x"), "budget_reader", 4096)
            .withBatchSize(2)
            .withTimeout(Duration.ofSeconds(2)));
    rec.label("GET_CONSUMPTION");
    c.getConsumptionStatus("train", "actor");
    rec.label("RESET_CONSUMPTION");
    c.resetConsumption("train", "actor");
    rec.label("RESET_CONSUMPTION every task");
    c.resetConsumption("train", null);
    rec.label("GET_PARTITION_META");
    c.getPartitionMeta("train");
    Map<Long, Map<String, Object>> tags = new LinkedHashMap<>();
    Map<String, Object> tag = new LinkedHashMap<>();
    tag.put("score", 0.75);
    tag.put("label", "caf\u00e9 \uD83D\uDE00");
    tag.put("n", -3L);
    tag.put("big", new BigInteger("18446744073709551615"));
    tag.put("list", List.of(1L, "two", true));
    tag.put("none", null);
    tags.put(gis[1], tag);
    rec.label("SET_TAGS merge");
    c.setTags(TagUpdate.merge("train", tags));
    rec.label("SET_TAGS replace");
    c.setTags(TagUpdate.replace("train", Map.of(gis[2], Map.of("k", "v"))));
    rec.label("GET_TAGS");
    c.getTags("train", List.of(gis[1], gis[2]));
    rec.label("GET_BACKEND_META");
    c.getBackendMeta("train", List.of(gis[0], gis[1]), List.of("z"));
    rec.label("RESOLVE_KEYS_FOR_PUT");
    c.resolveKeysForPut("kv", List.of("a", "b"), Map.of("x", F32_2), 2);
    rec.label("RESOLVE_KEYS");
    c.resolveKeys("kv", List.of("a", "missing"), false);
    rec.label("RESOLVE_KEYS with an empty key: INVALID_ARGUMENT");
    assertThatThrownBy(() -> c.resolveKeys("kv", List.of("", "b"), false))
        .isInstanceOf(TqException.class);
    rec.label("RESOLVE_INDEXES");
    c.resolveIndexes("kv", List.of(gis[0], 1000L));
    rec.label("LIST_KEYS");
    c.listKeys(null);
    rec.label("PARTITION_STATISTICS");
    c.partitionStatistics("train");
    rec.label("STATISTICS");
    c.statistics();
    rec.label("GET_SAMPLE_META");
    c.getSampleMeta("train", List.of(gis[0], gis[1]), null);
    rec.inexact("SNAPSHOT_STATE");
    var state = c.snapshotState();
    rec.inexact("RESTORE_STATE");
    c.restoreState(state);
    rec.label("MARK_CLEARING");
    c.markClearing(
        new ClearSamplesRequest(List.of(gis[2]), List.of("train"), true, List.of(gens[2])));
    rec.label("CLEAR_SAMPLES");
    c.clearSamples(
        new ClearSamplesRequest(List.of(gis[2]), List.of("train"), true, List.of(gens[2])));
    rec.label("CLEAR_PARTITION");
    c.clearPartition("kv");
    rec.label("GET_METADATA unknown partition for fetch: error");
    assertThatThrownBy(
            () ->
                c.getMetadata(
                    new GetMetadataRequest(
                        FetchMode.FETCH,
                        "nowhere",
                        List.of("x"),
                        "actor",
                        1,
                        SamplingConfig.NONE,
                        Duration.ofMillis(10))))
        .isInstanceOf(TqException.class);
  }

  private static void transportScenario(Recorder rec, TransportClient client, HostPort address) {
    rec.label("PING");
    client.ping(address, CALL);
    rec.inexactReply("PROCESS_STATS");
    client.processStats(address, CALL);
    rec.label("unknown message type: UNSUPPORTED_OPERATION");
    assertThatThrownBy(
            () ->
                client.call(
                    address, Request.of(150, new byte[0]), BodyDestination.into(List.of()), CALL))
        .isInstanceOf(TqException.class);
  }

  /** A batch of 2 rows: a dense column of every dtype, a jagged column and object values. */
  private static Batch everyKind(BufferAllocator allocator) {
    Batch.Builder b = Batch.builder().rowCount(2);
    int salt = 0;
    for (DType dtype : DType.values()) {
      b.dense("d_" + dtype.torchName(), filled(allocator, dtype, salt++, 2, 3));
    }
    b.dense("scalar_f64", filled(allocator, DType.FLOAT64, 7, 2));
    try (Tensor r0 = filled(allocator, DType.FLOAT32, 1, 2, 2);
        Tensor r1 = filled(allocator, DType.FLOAT32, 2, 3, 2)) {
      b.add("jagged_f32", JaggedColumn.copyOf(allocator, DType.FLOAT32, List.of(r0, r1)));
    }
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("reward", 1.5);
    map.put("ids", filled(allocator, DType.INT32, 3, 3));
    map.put("tags", List.of("a", "b"));
    List<Object> values = new ArrayList<>();
    values.add(map);
    values.add(
        Arrays.asList(
            null,
            true,
            -7L,
            new BigInteger("18446744073709551615"),
            2.25,
            "h\u00e9llo \uD83D\uDE00",
            "x".repeat(40).getBytes(StandardCharsets.UTF_8)));
    b.objects("obj", values);
    return b.build();
  }

  private static void unitScenario(
      Recorder rec, RemoteStorageUnit unit, BufferAllocator allocator, Path scratch) {
    long[] gis = longs(4, 6);
    long[] gens = longs(0, 1);
    try (Batch batch = everyKind(allocator)) {
      rec.label("PUT held, every dtype and kind");
      unit.putAsync(gis, gens, batch, new int[] {0, 1}, 0x1122334455667788L, allocator).join();
      rec.label("FINISH keep");
      unit.finishAsync(longs(0x1122334455667788L), false).join();
      List<String> fields = new ArrayList<>(batch.fields());
      rec.label("GET every field");
      try (UnitRows rows = unit.getAsync(gis, gens, fields, allocator).join()) {
        assertThat(rows).isNotNull();
      }
      rec.label("GET unknown field: error");
      assertThatThrownBy(() -> unit.getAsync(gis, gens, List.of("nope"), allocator).join())
          .hasCauseInstanceOf(TqException.class);
      rec.label("GET stale generation: STALE_METADATA");
      assertThatThrownBy(() -> unit.getAsync(longs(6), longs(0), List.of("obj"), allocator).join())
          .hasCauseInstanceOf(TqException.class);
      rec.label("PUT kept at once (token 0)");
      try (Batch one =
          Batch.builder()
              .rowCount(1)
              .dense("x", filled(allocator, DType.FLOAT32, 9, 1, 2))
              .build()) {
        unit.putAsync(longs(8), longs(0), one, new int[] {0}, 0L, allocator).join();
      }
      rec.label("FINISH rollback of an unknown token");
      unit.finishAsync(longs(99), true).join();
    }
    rec.label("STATS");
    unit.stats();
    String path = scratch.resolve("unit-0.tqckpt").toString();
    rec.label("SAVE_CHECKPOINT");
    FileDigest digest = unit.saveCheckpointAsync(path).join();
    rec.label("PREPARE_LOAD");
    unit.prepareLoadAsync(7L, path, digest).join();
    rec.label("COMMIT_LOAD");
    unit.commitLoadAsync(7L).join();
    rec.label("ABORT_LOAD");
    unit.abortLoadAsync(8L).join();
    rec.label("CLEAR");
    unit.clearAsync(longs(4, 6, 8), longs(0, 1, 0)).join();
  }

  private static void nodeScenario(
      Recorder rec,
      TransportClient client,
      HostPort address,
      BufferAllocator allocator,
      Path scratch) {
    RemoteObjectStore store =
        RemoteObjectStore.connect(List.of(address), transport().build(), allocator);
    try {
      assertThat(
              store.setup(
                  StoreConfig.builder()
                      .localHostname("client")
                      .globalSegmentSize(16L << 20)
                      .localBufferSize(16L << 20)
                      .build()))
          .isZero();
      ReplicateConfig pinned = new ReplicateConfig(1, true, false);
      try (Tensor cell = filled(allocator, DType.FLOAT32, 5, 2, 3)) {
        rec.label("WRITE tensor cell 3.0@x");
        assertThat(store.upsert("3.0@x", cell.segment(), pinned)).isZero();
      }
      Map<String, Object> value = new LinkedHashMap<>();
      value.put("text", "hi");
      try (Tensor ids = filled(allocator, DType.INT64, 4, 2)) {
        value.put("ids", ids);
        EncodedValue encoded = ValueEncoder.encode(value);
        try (NativeBuffer packed = allocator.allocate(encoded.packedSize())) {
          encoded.packInto(packed.segment());
          rec.label("WRITE object cell 3.0@obj (packed buffer)");
          assertThat(store.upsert("3.0@obj", packed.segment(), pinned)).isZero();
        }
      }
      rec.label("WRITE a key outside the cell layout");
      try (NativeBuffer raw = allocator.allocate(5)) {
        raw.segment().copyFrom(MemorySegment.ofArray("plain".getBytes(StandardCharsets.UTF_8)));
        assertThat(store.put("plain-key", raw.segment(), ReplicateConfig.DEFAULT)).isZero();
      }
      try (NativeBuffer into = allocator.allocate(24);
          NativeBuffer small = allocator.allocate(4)) {
        assertThat(store.registerBuffer(into.segment())).isZero();
        assertThat(store.registerBuffer(small.segment())).isZero();
        rec.label("READ");
        store.batchGetInto(
            List.of("3.0@x", "9.0@x", "plain-key"),
            List.of(into.segment(), small.segment(), small.segment()));
        store.unregisterBuffer(into.segment());
        store.unregisterBuffer(small.segment());
      }
      rec.label("EXIST");
      store.batchIsExist(List.of("3.0@x", "nope"));
      rec.label("SIZE");
      store.getSize("3.0@obj");
      rec.label("REMOVE");
      store.batchRemove(List.of("3.0@x", "nope"), true);
      rec.label("REMOVE_REGEX");
      store.removeByRegex("^plain", true);
      String path = scratch.resolve("node-0.tqckpt").toString();
      rec.label(onNode(StoreNodeProtocol.SAVE_CHECKPOINT));
      FileDigest saved;
      try (Response r =
          client.call(
              address,
              Request.of(
                  StoreNodeProtocol.SAVE_CHECKPOINT.typeId(),
                  new CheckpointMessages.Save(path).encode()),
              BodyDestination.into(List.of()),
              CALL)) {
        saved = CheckpointMessages.digest(r);
      }
      rec.label(onNode(StoreNodeProtocol.PREPARE_LOAD));
      call(
          client,
          address,
          StoreNodeProtocol.PREPARE_LOAD,
          new CheckpointMessages.Prepare(3, path, saved).encode());
      rec.label(onNode(StoreNodeProtocol.COMMIT_LOAD));
      call(
          client, address, StoreNodeProtocol.COMMIT_LOAD, new CheckpointMessages.Token(3).encode());
      rec.label(onNode(StoreNodeProtocol.ABORT_LOAD));
      call(client, address, StoreNodeProtocol.ABORT_LOAD, new CheckpointMessages.Token(4).encode());
      rec.label(onNode(StoreNodeProtocol.STATS));
      assertThat(store.nodeStatistics(0).objects()).isPositive();
      rec.label("REMOVE_ALL");
      store.removeAll(true);
    } finally {
      store.closeStore();
    }
  }

  /** The label of a store-node message whose name the storage-unit table also has. */
  private static String onNode(StoreNodeProtocol type) {
    return type.name() + " (store node)";
  }

  private static void call(
      TransportClient client, HostPort address, MessageType type, byte[] meta) {
    try (Response r =
        client.call(
            address, Request.of(type.typeId(), meta), BodyDestination.into(List.of()), CALL)) {
      assertThat(r).isNotNull();
    }
  }

  /**
   * The vectors are driven by the protocol tables: every entry of every service's table has at
   * least one request vector, and every request of a service is labelled with its entry's name.
   */
  private static void assertCoversTheTables(List<Vector> vectors) {
    Map<Integer, MessageType> table = new TreeMap<>();
    for (MessageType type : ProtocolTables.all()) {
      table.put(type.typeId(), type);
    }
    Map<Integer, String> covered = new TreeMap<>();
    for (Vector v : vectors) {
      MessageType type = table.get(v.type());
      if (v.request() && type != null) {
        assertThat(v.label()).as("label of a type %d request", v.type()).startsWith(type.name());
        covered.putIfAbsent(type.typeId(), type.name());
      }
    }
    Map<Integer, String> entries = new TreeMap<>();
    table.forEach((id, type) -> entries.put(id, type.name()));
    assertThat(covered).as("table entries with a vector").isEqualTo(entries);
  }

  private static String slug(String label) {
    String s = label.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9]+", "-");
    s = s.replaceAll("^-+|-+$", "");
    return s.length() > 60 ? s.substring(0, 60) : s;
  }

  /** The files of the vectors: name to bytes, the manifest last. */
  private static Map<String, byte[]> files(List<Vector> vectors) {
    Map<String, byte[]> files = new TreeMap<>();
    StringBuilder manifest =
        new StringBuilder(
            "# Wire test vectors, protocol version 1: frames the Java side produced (WireVectorsTest).\n"
                + "# file\tkind\ttype\tflags\tcorrelation_id\texact\tlabel\n");
    for (int i = 0; i < vectors.size(); i++) {
      Vector v = vectors.get(i);
      String name = String.format("%03d-%s-%s.bin", i, slug(v.label()), v.kind());
      files.put(name, v.bytes());
      manifest
          .append(name)
          .append('\t')
          .append(v.kind())
          .append('\t')
          .append(v.type())
          .append('\t')
          .append(v.flags())
          .append('\t')
          .append(v.correlationId())
          .append('\t')
          .append(v.exact() ? 1 : 0)
          .append('\t')
          .append(v.label())
          .append('\n');
    }
    files.put("manifest.tsv", manifest.toString().getBytes(StandardCharsets.UTF_8));
    files.put(KV_BATCH_META_VALUE, kvBatchMetaValue());
    files.put(SHM_REQUEST_SECTION_VALUE, SharedRequestLayoutTest.explicitOffsetsSection());
    files.put(SHM_REQUEST_LAYOUT_VALUE, SharedRequestLayoutTest.layoutCase());
    return files;
  }

  /**
   * A value vector (no frame carries a KvBatchMeta): the msgpack of a descriptor with every
   * component set, keys' samples known for two keys and unknown (-1) for the third.
   */
  static final String KV_BATCH_META_VALUE = "value-kv-batch-meta.msgpack";

  /**
   * A value vector (shared-memory frames carry segment keys and descriptor numbers, so none is
   * recorded from a socket): the metadata section of a request whose bodies lie in a grant at
   * explicit offsets, the PROTOCOL.md example ({@link
   * SharedRequestLayoutTest#explicitOffsetsSection}).
   */
  static final String SHM_REQUEST_SECTION_VALUE = "value-shm-request-section.bin";

  /**
   * A value vector: a seeded case of the layout rule of shared requests, {@code [lengths, offsets]}
   * ({@link SharedRequestLayoutTest#layoutCase}).
   */
  static final String SHM_REQUEST_LAYOUT_VALUE = "value-shm-request-layout.msgpack";

  private static byte[] kvBatchMetaValue() {
    Map<String, Object> tag = new LinkedHashMap<>();
    tag.put("score", 0.5);
    tag.put("label", "caf\u00e9");
    org.transferqueue.meta.KvBatchMeta meta =
        new org.transferqueue.meta.KvBatchMeta(
            List.of("a", "b", "c"),
            List.of(tag, Map.of(), Map.of("n", 3L)),
            "kv",
            List.of("x", "y"),
            Map.of("step", 7L),
            List.of(4L, 9L, -1L),
            List.of(0L, 2L, -1L));
    return new MetaWriter().kvBatchMeta(meta).toByteArray();
  }

  @Test
  void shouldMatchTheCommittedVectors(BufferAllocator allocator) throws Exception {
    // Checkpoint paths are part of the frames: one fixed relative directory under target/.
    Path fixed = Path.of("target", "wire-vectors-scratch");
    Files.createDirectories(fixed);
    try {
      List<Vector> first = record(allocator, fixed);
      List<Vector> second = record(allocator, fixed);
      assertThat(second).hasSameSizeAs(first);
      for (int i = 0; i < first.size(); i++) {
        if (first.get(i).exact()) {
          assertThat(second.get(i).bytes())
              .as("frame %d (%s) is the same in two runs", i, first.get(i).label())
              .isEqualTo(first.get(i).bytes());
        }
      }
      assertCoversTheTables(first);
      Map<String, byte[]> expected = files(first);
      if (Boolean.getBoolean("tq.vectors.write") || !Files.isDirectory(VECTORS)) {
        write(expected);
      }
      compare(expected, first);
    } finally {
      try (var walk = Files.walk(fixed)) {
        walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  private static void write(Map<String, byte[]> expected) throws IOException {
    Files.createDirectories(VECTORS);
    try (var old = Files.list(VECTORS)) {
      for (Path p : old.toList()) {
        Files.delete(p);
      }
    }
    for (Map.Entry<String, byte[]> e : expected.entrySet()) {
      Files.write(VECTORS.resolve(e.getKey()), e.getValue());
    }
  }

  private static void compare(Map<String, byte[]> expected, List<Vector> vectors)
      throws IOException {
    List<String> committed;
    try (var list = Files.list(VECTORS)) {
      committed = list.map(p -> p.getFileName().toString()).sorted().toList();
    }
    String hint =
        " (after an intended wire change: mvn -pl tq-core test -Dtest=WireVectorsTest"
            + " -Dtq.vectors.write=true, then make the Python client agree)";
    assertThat(committed).as("vector files" + hint).containsExactlyElementsOf(expected.keySet());
    Map<String, Boolean> exact = new TreeMap<>();
    for (int i = 0; i < vectors.size(); i++) {
      Vector v = vectors.get(i);
      exact.put(String.format("%03d-%s-%s.bin", i, slug(v.label()), v.kind()), v.exact());
    }
    for (Map.Entry<String, byte[]> e : expected.entrySet()) {
      byte[] onDisk = Files.readAllBytes(VECTORS.resolve(e.getKey()));
      if (exact.getOrDefault(e.getKey(), true)) {
        assertThat(onDisk).as(e.getKey() + hint).isEqualTo(e.getValue());
      } else {
        // Magic, version, type, flags and correlation id; not the lengths, which vary with the
        // content (a heap counter's msgpack integer width, an encoded state).
        assertThat(Arrays.copyOf(onDisk, FrameDescriptor.METADATA_LENGTH_OFFSET))
            .as(e.getKey() + " header" + hint)
            .isEqualTo(Arrays.copyOf(e.getValue(), FrameDescriptor.METADATA_LENGTH_OFFSET));
        assertThat(
                Arrays.copyOfRange(
                    onDisk,
                    FrameDescriptor.CORRELATION_ID_OFFSET,
                    FrameDescriptor.BODY_LENGTH_OFFSET))
            .as(e.getKey() + " correlation id" + hint)
            .isEqualTo(
                Arrays.copyOfRange(
                    e.getValue(),
                    FrameDescriptor.CORRELATION_ID_OFFSET,
                    FrameDescriptor.BODY_LENGTH_OFFSET));
      }
    }
  }
}
