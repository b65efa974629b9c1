package org.transferqueue.bench;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
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
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.RootAllocator;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.Reply;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.RequestHandler;
import org.transferqueue.transport.Response;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;
import org.transferqueue.transport.TransportServer;

/**
 * Round trip of 64 bodies of 1 MiB each (64 MiB out, the same 64 MiB back, 128 MiB moved per
 * operation) over loopback:
 *
 * <ul>
 *   <li>{@code transport}: a {@link TransportClient} call to a {@link TransportServer} whose
 *       handler echoes the request's bodies, over the socket (shared memory off); the reply lands
 *       in 64 caller segments ({@link BodyDestination#into}), the Java form of {@code
 *       batch_get_into};
 *   <li>{@code transportSharedMemory}: the same call with shared memory on (docs/PROTOCOL.md
 *       section 4.2): the client copies the 64 MiB into a granted region, the echo's reply is
 *       leased in place, and the client copies it into its 64 segments: two copies of 64 MiB;
 *   <li>{@code memoryCopy}: the baseline of {@code transportSharedMemory}, the same two copies of
 *       64 MiB in one thread (sources to a staging area, staging area to the destinations);
 *   <li>{@code rawSocket}: the baseline, the same bytes over a plain blocking {@link SocketChannel}
 *       pair: the client writes them with one gathering write loop, an echo thread reads them into
 *       its 64 buffers and writes them back, the client reads them into its 64 destinations. No
 *       framing, no allocation, no thread hand-off; platform threads in blocking mode;
 *   <li>{@code rawSocketVirtual}: the same over a second socket pair, with the echo side and the
 *       client side each on a virtual thread, the threading model the transport uses.
 * </ul>
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar
 * TransportBenchmark -f 1 -wi 2 -i 3}. Bandwidth = 128 MiB / (ms per op); the ratio of the two
 * scores is the transport's overhead.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class TransportBenchmark {
  private static final int BODIES = 64;
  private static final long BODY_BYTES = 1L << 20;
  private static final int ECHO = 16;

  private RootAllocator allocator;
  private final List<NativeBuffer> sources = new ArrayList<>();
  private final List<NativeBuffer> destinations = new ArrayList<>();
  private final List<NativeBuffer> echoBuffers = new ArrayList<>();
  private TransportServer server;
  private TransportClient client;
  private TransportServer sharedServer;
  private TransportClient sharedClient;
  private final List<NativeBuffer> staging = new ArrayList<>();
  private Request request;
  private BodyDestination into;

  private ServerSocketChannel rawServer;
  private SocketChannel rawClient;
  private Thread rawEcho;
  private ByteBuffer[] rawOut;
  private ByteBuffer[] rawIn;
  private final List<NativeBuffer> virtualEchoBuffers = new ArrayList<>();
  private SocketChannel virtualClient;
  private Thread virtualEcho;
  private ExecutorService virtualExecutor;

  /** Allocates the bodies, starts both servers and warms one connection of each. */
  @Setup(Level.Trial)
  public void setUp() throws IOException {
    allocator = RootAllocator.builder().name("bench").limitBytes(2L << 30).build();
    allocator.preallocate(BODY_BYTES, 8 * BODIES);
    for (int i = 0; i < BODIES; i++) {
      NativeBuffer source = allocator.allocate(BODY_BYTES);
      source.segment().fill((byte) i);
      sources.add(source);
      destinations.add(allocator.allocate(BODY_BYTES));
      echoBuffers.add(allocator.allocate(BODY_BYTES));
      virtualEchoBuffers.add(allocator.allocate(BODY_BYTES));
      staging.add(allocator.allocate(BODY_BYTES));
    }
    TransportConfig.Builder configBuilder =
        TransportConfig.builder().connectionsPerPeer(1).defaultCallTimeout(Duration.ofSeconds(30));
    TransportConfig config = configBuilder.sharedMemory(false).build();
    TransportConfig shared = configBuilder.sharedMemory(true).build();
    RequestHandler echo =
        RequestHandler.replying(
            r -> {
              List<MemorySegment> bodies = new ArrayList<>(r.bodyCount());
              for (int i = 0; i < r.bodyCount(); i++) {
                bodies.add(r.body(i));
              }
              return new Reply(new byte[0], bodies, List.of());
            });
    server = TransportServer.builder(config, allocator).handler(ECHO, echo).start();
    client = new TransportClient(config, allocator);
    sharedServer = TransportServer.builder(shared, allocator).handler(ECHO, echo).start();
    sharedClient = new TransportClient(shared, allocator);
    request = new Request(ECHO, new byte[0], sources.stream().map(NativeBuffer::segment).toList());
    into = BodyDestination.into(destinations.stream().map(NativeBuffer::segment).toList());

    rawServer = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
    rawClient = SocketChannel.open(rawServer.getLocalAddress());
    rawClient.setOption(StandardSocketOptions.TCP_NODELAY, true);
    SocketChannel accepted = rawServer.accept();
    accepted.setOption(StandardSocketOptions.TCP_NODELAY, true);
    ByteBuffer[] echoViews = views(echoBuffers);
    rawEcho =
        Thread.ofPlatform().daemon().name("raw-echo").start(() -> rawEcho(accepted, echoViews));
    rawOut = views(sources);
    rawIn = views(destinations);

    virtualClient = SocketChannel.open(rawServer.getLocalAddress());
    virtualClient.setOption(StandardSocketOptions.TCP_NODELAY, true);
    SocketChannel virtualAccepted = rawServer.accept();
    virtualAccepted.setOption(StandardSocketOptions.TCP_NODELAY, true);
    ByteBuffer[] virtualEchoViews = views(virtualEchoBuffers);
    virtualEcho =
        Thread.ofVirtual()
            .name("raw-echo-virtual")
            .start(() -> rawEcho(virtualAccepted, virtualEchoViews));
    virtualExecutor = Executors.newVirtualThreadPerTaskExecutor();
  }

  private static ByteBuffer[] views(List<NativeBuffer> buffers) {
    return buffers.stream().map(b -> b.segment().asByteBuffer()).toArray(ByteBuffer[]::new);
  }

  private static void rawEcho(SocketChannel channel, ByteBuffer[] buffers) {
    try (channel) {
      while (true) {
        for (ByteBuffer b : buffers) {
          b.clear();
        }
        readFully(channel, buffers);
        for (ByteBuffer b : buffers) {
          b.flip();
        }
        writeFully(channel, buffers);
      }
    } catch (IOException e) {
      // The benchmark closed the connection at tear-down.
    }
  }

  private static void readFully(SocketChannel channel, ByteBuffer[] buffers) throws IOException {
    int first = 0;
    while (first < buffers.length) {
      if (channel.read(buffers, first, buffers.length - first) < 0) {
        throw new EOFException();
      }
      while (first < buffers.length && !buffers[first].hasRemaining()) {
        first++;
      }
    }
  }

  private static void writeFully(SocketChannel channel, ByteBuffer[] buffers) throws IOException {
    int first = 0;
    while (first < buffers.length) {
      channel.write(buffers, first, buffers.length - first);
      while (first < buffers.length && !buffers[first].hasRemaining()) {
        first++;
      }
    }
  }

  /**
   * One call through the transport.
   *
   * @return the reply's body count
   */
  @Benchmark
  public int transport() {
    try (Response response = client.call(server.address(), request, into, Duration.ofSeconds(30))) {
      return response.bodyCount();
    }
  }

  /**
   * One call through the transport with shared memory.
   *
   * @return the reply's body count
   */
  @Benchmark
  public int transportSharedMemory() {
    try (Response response =
        sharedClient.call(sharedServer.address(), request, into, Duration.ofSeconds(30))) {
      return response.bodyCount();
    }
  }

  /**
   * The two copies of 64 MiB a shared-memory echo makes, in one thread.
   *
   * @return the last destination's first byte
   */
  @Benchmark
  public byte memoryCopy() {
    for (int i = 0; i < BODIES; i++) {
      MemorySegment.copy(sources.get(i).segment(), 0, staging.get(i).segment(), 0, BODY_BYTES);
    }
    for (int i = 0; i < BODIES; i++) {
      MemorySegment.copy(staging.get(i).segment(), 0, destinations.get(i).segment(), 0, BODY_BYTES);
    }
    return destinations.get(BODIES - 1).segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0);
  }

  /**
   * The same bytes over a plain socket pair.
   *
   * @return the last destination buffer's position
   */
  @Benchmark
  public int rawSocket() throws IOException {
    for (ByteBuffer b : rawOut) {
      b.clear();
    }
    for (ByteBuffer b : rawIn) {
      b.clear();
    }
    writeFully(rawClient, rawOut);
    readFully(rawClient, rawIn);
    return rawIn[BODIES - 1].position();
  }

  /**
   * The same bytes over a plain socket pair, both ends on virtual threads.
   *
   * @return the last destination buffer's position
   */
  @Benchmark
  public int rawSocketVirtual() throws Exception {
    return virtualExecutor
        .submit(
            () -> {
              for (ByteBuffer b : rawOut) {
                b.clear();
              }
              for (ByteBuffer b : rawIn) {
                b.clear();
              }
              writeFully(virtualClient, rawOut);
              readFully(virtualClient, rawIn);
              return rawIn[BODIES - 1].position();
            })
        .get();
  }

  /** Stops both servers and frees the memory. */
  @TearDown(Level.Trial)
  public void tearDown() throws IOException, InterruptedException {
    client.close();
    server.close();
    sharedClient.close();
    sharedServer.close();
    staging.forEach(NativeBuffer::close);
    rawClient.close();
    virtualClient.close();
    rawServer.close();
    rawEcho.join();
    virtualEcho.join();
    virtualExecutor.close();
    sources.forEach(NativeBuffer::close);
    destinations.forEach(NativeBuffer::close);
    echoBuffers.forEach(NativeBuffer::close);
    virtualEchoBuffers.forEach(NativeBuffer::close);
    allocator.close();
  }
}
