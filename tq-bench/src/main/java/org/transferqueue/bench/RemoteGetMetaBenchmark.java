package org.transferqueue.bench;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.remote.controller.ControllerServer;
import org.transferqueue.remote.controller.RemoteController;
import org.transferqueue.tensor.DType;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * Latency of a remote {@code getMeta}: a fetch of 64 samples x 4 fields (int64 rows of 1024
 * elements) from a controller served over loopback (a {@link ControllerServer} in this JVM, reached
 * through a {@link RemoteController}), sampled per call so that p50 and p99 can be read (JMH {@code
 * SampleTime}). Baselines measured in the same run:
 *
 * <ul>
 *   <li>{@code ping}: the transport's smallest round trip, a PING to the same server ({@link
 *       TransportClient#ping}): framing, the connection's reader and writer threads and the
 *       server's handler thread, without the controller and the metadata codec;
 *   <li>{@code rawPingPong}: one byte there and back over a plain blocking socket pair with an echo
 *       thread, the floor of any loopback round trip;
 *   <li>{@code localGetMeta}: the same fetch on the controller in this thread, no network.
 * </ul>
 *
 * The partition holds {@value #PARTITION_SIZE} produced samples; when fewer than a batch are left
 * unconsumed, the consumption is reset inside the timed call (one call in {@value
 * #CALLS_PER_RESET}, far below the 1 % that would move p99).
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar \
 *     RemoteGetMetaBenchmark -f 1 -wi 2 -i 3
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class RemoteGetMetaBenchmark {
  static final int BATCH = 64;
  static final int PARTITION_SIZE = 200_000;
  static final int CALLS_PER_RESET = PARTITION_SIZE / BATCH;
  static final List<String> FIELDS = List.of("input_ids", "attention_mask", "responses", "rewards");
  static final FieldSchema SCHEMA = FieldSchema.regular(DType.INT64, 1024);
  private static final Duration CALL = Duration.ofSeconds(10);

  private RootAllocator allocator;
  private Controller controller;
  private ControllerServer server;
  private TransportClient client;
  private RemoteController remote;
  private GetMetadataRequest fetch;
  private Controller localController;
  private int remoteLeft;
  private int localLeft;

  private ServerSocketChannel rawServer;
  private SocketChannel rawClient;
  private Thread rawEcho;
  private final ByteBuffer rawByte = ByteBuffer.allocateDirect(1);

  /** Starts the server, fills both partitions and opens the connections. */
  @Setup(Level.Trial)
  public void setUp() throws IOException {
    allocator = RootAllocator.builder().name("bench").limitBytes(1L << 30).build();
    controller = filled();
    localController = filled();
    TransportConfig config =
        TransportConfig.builder().connectionsPerPeer(1).defaultCallTimeout(CALL).build();
    server = ControllerServer.start(controller, config, allocator);
    client = new TransportClient(config, allocator);
    remote = new RemoteController(client, server.address(), CALL, CALL);
    fetch = GetMetadataRequest.fetch("p", FIELDS, "actor", BATCH);
    remoteLeft = PARTITION_SIZE;
    localLeft = PARTITION_SIZE;
    client.ping(server.address(), CALL);

    rawServer = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
    rawClient = SocketChannel.open(rawServer.getLocalAddress());
    rawClient.setOption(StandardSocketOptions.TCP_NODELAY, true);
    SocketChannel accepted = rawServer.accept();
    accepted.setOption(StandardSocketOptions.TCP_NODELAY, true);
    rawEcho = Thread.ofPlatform().daemon().name("raw-echo").start(() -> echo(accepted));
  }

  private static Controller filled() {
    Controller c = new Controller(ControllerOptions.defaults());
    c.getMetadata(GetMetadataRequest.insert("p", FIELDS, PARTITION_SIZE));
    Map<String, FieldSchema> schema = new LinkedHashMap<>();
    for (String field : FIELDS) {
      schema.put(field, SCHEMA);
    }
    for (long start = 0; start < PARTITION_SIZE; start += 65_536) {
      List<Long> chunk =
          LongStream.range(start, Math.min(PARTITION_SIZE, start + 65_536)).boxed().toList();
      c.updateProductionStatus(ProductionUpdate.of("p", chunk, schema));
    }
    return c;
  }

  private static void echo(SocketChannel channel) {
    ByteBuffer one = ByteBuffer.allocateDirect(1);
    try (channel) {
      while (true) {
        one.clear();
        if (channel.read(one) < 0) {
          return;
        }
        one.flip();
        while (one.hasRemaining()) {
          channel.write(one);
        }
      }
    } catch (IOException e) {
      // The benchmark closed the connection at tear-down.
    }
  }

  /**
   * One remote fetch of 64 samples.
   *
   * @return the batch metadata
   */
  @Benchmark
  public BatchMeta getMeta() {
    if (remoteLeft < BATCH) {
      controller.resetConsumption("p", "actor");
      remoteLeft = PARTITION_SIZE;
    }
    remoteLeft -= BATCH;
    return remote.getMetadata(fetch);
  }

  /** One PING round trip to the same server. */
  @Benchmark
  public void ping() {
    client.ping(server.address(), CALL);
  }

  /**
   * One byte there and back over a plain socket pair.
   *
   * @return the byte
   */
  @Benchmark
  public byte rawPingPong() throws IOException {
    rawByte.clear();
    rawByte.put(0, (byte) 7);
    while (rawByte.hasRemaining()) {
      rawClient.write(rawByte);
    }
    rawByte.clear();
    while (rawByte.hasRemaining()) {
      if (rawClient.read(rawByte) < 0) {
        throw new EOFException();
      }
    }
    return rawByte.get(0);
  }

  /**
   * The same fetch on a controller in this thread.
   *
   * @return the batch metadata
   */
  @Benchmark
  public BatchMeta localGetMeta() {
    if (localLeft < BATCH) {
      localController.resetConsumption("p", "actor");
      localLeft = PARTITION_SIZE;
    }
    localLeft -= BATCH;
    return localController.getMetadata(fetch);
  }

  /** Stops the server and closes the sockets. */
  @TearDown(Level.Trial)
  public void tearDown() throws IOException, InterruptedException {
    client.close();
    server.close();
    rawClient.close();
    rawServer.close();
    rawEcho.join();
    allocator.close();
  }
}
