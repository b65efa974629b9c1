package org.transferqueue.bench;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.remote.storage.RemoteSimpleStorageManager;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.TransportConfig;

/**
 * SimpleStorage over two storage-unit servers on loopback (in this JVM): put and get throughput
 * against {@code MemorySegment.copy} of the same bytes measured in the same run.
 *
 * <p>Each operation moves {@code rows x elements x 4 x fields} bytes. {@code get} reads with
 * placeholder schemas (reply bodies into buffers, then one copy per row into the result); {@code
 * getExpected} reads with the field schemas the controller would give (reply bodies straight into
 * the result's rows). Ratios are ops/s over {@code copyBaseline}'s.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar \
 *     RemoteSimpleStorageBenchmark -f 1 -wi 2 -i 3
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class RemoteSimpleStorageBenchmark {

  /** Rows x float32 elements per row x fields. */
  @Param({"256x65536x1"})
  public String layout;

  private RootAllocator allocator;
  private final List<StorageUnit> units = new ArrayList<>();
  private final List<StorageUnitServer> servers = new ArrayList<>();
  private RemoteSimpleStorageManager manager;
  private Batch batch;
  private BatchMeta putMeta;
  private BatchMeta getMeta;
  private BatchMeta expectedMeta;
  private final List<MemorySegment> sources = new ArrayList<>();
  private final List<NativeBuffer> copyTargets = new ArrayList<>();

  /** Starts two unit servers and the router, builds the batch and stores it once. */
  @Setup(Level.Trial)
  public void setUp() {
    String[] parts = layout.split("x");
    int rows = Integer.parseInt(parts[0]);
    int elements = Integer.parseInt(parts[1]);
    int fields = Integer.parseInt(parts[2]);
    allocator = RootAllocator.builder().name("bench").limitBytes(12L << 30).build();
    TransportConfig transport =
        TransportConfig.builder()
            .bindHost("127.0.0.1")
            .bindPort(0)
            .defaultCallTimeout(Duration.ofSeconds(60))
            .build();
    List<HostPort> addresses = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      StorageUnit unit = new StorageUnit("bench-" + i, OptionalLong.empty(), allocator, 4L << 30);
      units.add(unit);
      StorageUnitServer server = StorageUnitServer.start(unit, transport, allocator);
      servers.add(server);
      addresses.add(server.address());
    }
    manager =
        new RemoteSimpleStorageManager(addresses, transport, allocator, ProductionNotifier.NO_OP);
    Batch.Builder builder = Batch.builder();
    long[] gis = new long[rows];
    for (int i = 0; i < rows; i++) {
      gis[i] = i;
    }
    BatchMeta.Builder getBuilder = BatchMeta.builder().globalIndexes(gis).partitionId("bench");
    BatchMeta.Builder expectedBuilder = BatchMeta.builder().globalIndexes(gis).partitionId("bench");
    for (int f = 0; f < fields; f++) {
      Tensor tensor = Tensor.allocate(allocator, DType.FLOAT32, rows, elements);
      tensor.segment().fill((byte) (f + 1));
      sources.add(tensor.segment());
      copyTargets.add(allocator.allocate(tensor.nbytes()));
      builder.dense("field_" + f, tensor);
      getBuilder.field("field_" + f, FieldSchema.placeholder());
      expectedBuilder.field("field_" + f, FieldSchema.regular(DType.FLOAT32, elements));
    }
    batch = builder.build();
    putMeta = BatchMeta.builder().globalIndexes(gis).partitionId("bench").build();
    getMeta = getBuilder.build();
    expectedMeta = expectedBuilder.build();
    manager.put(batch, putMeta);
  }

  /** Stops the servers and frees everything. */
  @TearDown(Level.Trial)
  public void tearDown() {
    manager.close();
    servers.forEach(StorageUnitServer::close);
    units.forEach(StorageUnit::close);
    batch.close();
    copyTargets.forEach(NativeBuffer::close);
    allocator.close();
  }

  /**
   * Puts the whole batch over the network, replacing the stored one.
   *
   * @return the result, so that it is not optimised away
   */
  @Benchmark
  public Object put() {
    return manager.put(batch, putMeta);
  }

  /**
   * Gets the whole batch with placeholder schemas.
   *
   * @param blackhole consumes the result
   */
  @Benchmark
  public void get(Blackhole blackhole) {
    try (Batch read = manager.get(getMeta, allocator)) {
      blackhole.consume(read);
    }
  }

  /**
   * Gets the whole batch with known schemas: straight into the result's rows.
   *
   * @param blackhole consumes the result
   */
  @Benchmark
  public void getExpected(Blackhole blackhole) {
    try (Batch read = manager.get(expectedMeta, allocator)) {
      blackhole.consume(read);
    }
  }

  /**
   * Copies the same bytes with {@code MemorySegment.copy}: the baseline.
   *
   * @return a target, so that the copy is not optimised away
   */
  @Benchmark
  public Object copyBaseline() {
    for (int f = 0; f < sources.size(); f++) {
      MemorySegment source = sources.get(f);
      MemorySegment.copy(source, 0, copyTargets.get(f).segment(), 0, source.byteSize());
    }
    return copyTargets;
  }
}
