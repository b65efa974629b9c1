package org.transferqueue.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
import org.transferqueue.Clock;
import org.transferqueue.config.HostPort;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.SyncPolicy;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.remote.storage.RemoteSimpleStorageManager;
import org.transferqueue.remote.storage.StorageUnitServer;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.simple.StorageUnit;
import org.transferqueue.storage.simple.UnitJournal;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.TransportConfig;

/**
 * Put throughput of SimpleStorage over two storage-unit servers on loopback (in this JVM) with
 * {@code storage.durability: none} and with a journal ({@code sync: fsync} and {@code interval}),
 * against the disk's own bandwidth measured in the same run: {@code diskBaseline} writes the same
 * bytes sequentially to a new file on the same filesystem (one gathering write from the same
 * off-heap segments), fsyncs it and deletes the previous one, as the journal appends to fresh
 * segment files and deletes old ones.
 *
 * <p>The layout is the {@code small} preset of {@code tq bench} by default: 1024 rows x 8192
 * float32 elements x 9 fields, 288 MiB per put. Ratios: {@code put[fsync]} and {@code
 * put[interval]} over {@code put[none]}, and each over {@code diskBaseline} (bytes per second). The
 * journal directory is {@code -Dtq.bench.dir} (default the temporary directory); journals are
 * compacted as in production (at half of {@code max_bytes}, 4 GiB).
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar \
 *     DurablePutBenchmark -f 1 -wi 1 -i 3
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 1, time = 3)
@Measurement(iterations = 3, time = 5)
public class DurablePutBenchmark {

  /** Rows x float32 elements per row x fields; {@code small} is 1024x8192x9. */
  @Param({"1024x8192x9"})
  public String layout;

  /** {@code none}, {@code fsync} or {@code interval}. */
  @Param({"none", "fsync", "interval"})
  public String durability;

  private Path dir;
  private RootAllocator allocator;
  private final List<StorageUnit> units = new ArrayList<>();
  private final List<UnitJournal> journals = new ArrayList<>();
  private final List<StorageUnitServer> servers = new ArrayList<>();
  private RemoteSimpleStorageManager manager;
  private Batch batch;
  private BatchMeta putMeta;
  private final List<MemorySegment> sources = new ArrayList<>();
  private ByteBuffer[] baselineBuffers;
  private long baselineFiles;
  private Path previousBaseline;

  /** Starts two unit servers (journaled unless {@code none}) and builds the batch. */
  @Setup(Level.Trial)
  public void setUp() throws IOException {
    String[] parts = layout.split("x");
    int rows = Integer.parseInt(parts[0]);
    int elements = Integer.parseInt(parts[1]);
    int fields = Integer.parseInt(parts[2]);
    dir =
        Files.createTempDirectory(
            Path.of(System.getProperty("tq.bench.dir", System.getProperty("java.io.tmpdir"))),
            "tq-durable-put-");
    allocator = RootAllocator.builder().name("bench").limitBytes(16L << 30).build();
    TransportConfig transport =
        TransportConfig.builder()
            .bindHost("127.0.0.1")
            .bindPort(0)
            .defaultCallTimeout(Duration.ofSeconds(120))
            .build();
    List<HostPort> addresses = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      StorageUnit unit = new StorageUnit("bench-" + i, OptionalLong.empty(), allocator, 6L << 30);
      units.add(unit);
      if (!durability.equals("none")) {
        JournalSettings settings =
            JournalSettings.builder(dir.resolve("storage-unit-" + i))
                .sync(SyncPolicy.fromName(durability))
                .build();
        journals.add(UnitJournal.open(unit, settings, "storage-unit-" + i, Clock.SYSTEM));
      }
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
    for (int f = 0; f < fields; f++) {
      Tensor tensor = Tensor.allocate(allocator, DType.FLOAT32, rows, elements);
      tensor.segment().fill((byte) (f + 1));
      sources.add(tensor.segment());
      builder.dense("field_" + f, tensor);
    }
    batch = builder.build();
    putMeta = BatchMeta.builder().globalIndexes(gis).partitionId("bench").build();
    baselineBuffers = new ByteBuffer[sources.size()];
  }

  /** Stops the servers, closes the journals (with their final checkpoint) and frees everything. */
  @TearDown(Level.Trial)
  public void tearDown() throws IOException {
    manager.close();
    servers.forEach(StorageUnitServer::close);
    journals.forEach(UnitJournal::close);
    units.forEach(StorageUnit::close);
    batch.close();
    allocator.close();
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(DurablePutBenchmark::delete);
    }
  }

  private static void delete(Path path) {
    try {
      Files.delete(path);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Puts the whole batch over the network, replacing the stored one; journaled units reply once the
   * cells are in the journal per the sync policy.
   *
   * @return the result, so that it is not optimised away
   */
  @Benchmark
  public Object put() {
    return manager.put(batch, putMeta);
  }

  /**
   * Writes the same bytes to a new file of the same filesystem with one gathering write from the
   * same segments, fsyncs it and deletes the previous one: the disk's bandwidth for the journal's
   * own pattern (appending to fresh files, deleting old ones), the baseline. The {@code durability}
   * parameter does not change it; it is measured once per trial.
   *
   * @return the bytes written
   * @throws IOException on a write error
   */
  @Benchmark
  public long diskBaseline() throws IOException {
    long total = 0;
    for (int f = 0; f < sources.size(); f++) {
      baselineBuffers[f] = sources.get(f).asByteBuffer();
      total += baselineBuffers[f].remaining();
    }
    Path file = dir.resolve("baseline-" + (baselineFiles++) + ".bin");
    long written = 0;
    try (FileChannel out =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      while (written < total) {
        written += out.write(baselineBuffers);
      }
      out.force(false);
    }
    if (previousBaseline != null) {
      Files.delete(previousBaseline);
    }
    previousBaseline = file;
    return written;
  }
}
