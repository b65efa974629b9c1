package org.transferqueue.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.codec.MsgpackValue.newArray;
import static org.transferqueue.codec.MsgpackValue.newBoolean;
import static org.transferqueue.codec.MsgpackValue.newInteger;
import static org.transferqueue.codec.MsgpackValue.newNil;
import static org.transferqueue.codec.MsgpackValue.newString;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.MsgpackValue;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.objectstore.engine.EmbeddedObjectStore;
import org.transferqueue.objectstore.engine.MasterConfig;
import org.transferqueue.remote.objectstore.StoreNodeServer;
import org.transferqueue.testing.Await;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;

/**
 * Slow peers: a server that accepts and answers the HELLO, then never reads again, is cut off by
 * the client's deadline without piling up threads or memory; a client that stops reading its
 * replies does not stop the server from serving others, and its memory is freed once it goes.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SlowPeerTest {
  private static final int CALLS = 64;

  @Test
  void shouldCutOffAServerThatStopsReadingByTheDeadline(BufferAllocator allocator)
      throws IOException, InterruptedException {
    List<SocketChannel> accepted = new CopyOnWriteArrayList<>();
    try (ServerSocketChannel listener =
        ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0))) {
      Thread acceptor =
          Thread.ofVirtual().start(() -> acceptAndAnswerHelloOnly(listener, accepted));
      HostPort address =
          new HostPort("127.0.0.1", ((InetSocketAddress) listener.getLocalAddress()).getPort());
      Duration deadline = Duration.ofMillis(500);
      TransportConfig config =
          TransportConfig.builder()
              .connectTimeout(Duration.ofSeconds(2))
              .defaultCallTimeout(deadline)
              .build();
      int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
      try (TransportClient client = new TransportClient(config, allocator);
          NativeBuffer body = allocator.allocate(4L << 20)) {
        long start = System.nanoTime();
        List<CompletableFuture<Response>> calls = new ArrayList<>();
        for (int i = 0; i < CALLS; i++) {
          calls.add(
              client.callAsync(address, Request.of(300, new byte[] {(byte) 0x90}, body.segment())));
        }
        List<ErrorCode> codes = new ArrayList<>();
        for (CompletableFuture<Response> call : calls) {
          try {
            call.get(30, TimeUnit.SECONDS).close();
          } catch (ExecutionException e) {
            codes.add(((TqException) e.getCause()).code());
          } catch (TimeoutException e) {
            throw new AssertionError("a call outlived its deadline by far", e);
          }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertThat(codes)
            .hasSize(CALLS)
            .allSatisfy(
                code ->
                    assertThat(code)
                        .isIn(ErrorCode.DEADLINE_EXCEEDED, ErrorCode.CONNECTION_FAILED));
        assertThat(client.outstandingCalls()).isZero();
        int threadsAfter = ManagementFactory.getThreadMXBean().getThreadCount();
        System.out.println(
            "[faults] server that stops reading: "
                + CALLS
                + " calls of 4 MiB all failed ("
                + codes.stream().distinct().toList()
                + ") within "
                + millis
                + " ms, deadline "
                + deadline.toMillis()
                + " ms; platform threads "
                + threadsBefore
                + " -> "
                + threadsAfter);
        assertThat(threadsAfter).isLessThan(threadsBefore + 8);
      }
      acceptor.interrupt();
    } finally {
      for (SocketChannel channel : accepted) {
        channel.close();
      }
    }
  }

  /** Accepts connections; answers each one's HELLO, then never reads from it again. */
  private static void acceptAndAnswerHelloOnly(
      ServerSocketChannel listener, List<SocketChannel> accepted) {
    try {
      while (true) {
        SocketChannel channel = listener.accept();
        accepted.add(channel);
        ByteBuffer header = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH);
        while (header.hasRemaining()) {
          if (channel.read(header) < 0) {
            break;
          }
        }
        header.flip().order(ByteOrder.LITTLE_ENDIAN);
        long metadata = Integer.toUnsignedLong(header.getInt(12));
        long id = header.getLong(16);
        ByteBuffer rest =
            ByteBuffer.allocate(
                (int) (FrameDescriptor.bodyOffset(metadata) - FrameDescriptor.HEADER_LENGTH));
        while (rest.hasRemaining()) {
          if (channel.read(rest) < 0) {
            break;
          }
        }
        byte[] reply =
            RawFrames.frame(
                FrameDescriptor.MAGIC,
                FrameDescriptor.CURRENT_VERSION,
                1,
                FrameDescriptor.FLAG_RESPONSE,
                id,
                1,
                0,
                new byte[] {(byte) 0x90},
                List.of());
        channel.write(ByteBuffer.wrap(reply));
      }
    } catch (IOException e) {
      // The listener was closed at the end of the test.
    }
  }

  @Test
  void shouldServeOthersWhileAClientStopsReadingItsReplies(BufferAllocator allocator)
      throws Exception {
    BufferAllocator connections = allocator.newChildAllocator("node-server", 1L << 30);
    EmbeddedObjectStore engine =
        EmbeddedObjectStore.create(allocator, MasterConfig.builder().asyncThreads(1).build());
    assertThat(
            engine.setup(
                StoreConfig.builder()
                    .localHostname("node")
                    .globalSegmentSize(16L << 20)
                    .localBufferSize(1L << 20)
                    .build()))
        .isZero();
    StoreNodeServer server =
        StoreNodeServer.start(engine, TransportConfig.builder().bindPort(0).build(), connections);
    try {
      byte[] big = new byte[4 << 20];
      try (RawFrames.Connection writer = new RawFrames.Connection(server.address())) {
        hello(writer);
        writer.write(RawFrames.request(300, 2, write("big"), List.of(big)));
        assertThat(writer.read().meta()).isEqualTo(newArray(newArray(newInteger(0))));
      }
      long baseline = connections.outstandingBuffers();

      RawFrames.Connection stalled = new RawFrames.Connection(server.address());
      try {
        hello(stalled);
        MsgpackValue read = newArray(newArray(newString("big")), newArray(newInteger(-1)));
        for (int i = 0; i < 32; i++) {
          stalled.write(RawFrames.request(301, 10 + i, read, List.of()));
        }
        // 128 MiB of replies wait for a reader that never comes; others are served meanwhile.
        CompletableFuture<Integer> others =
            CompletableFuture.supplyAsync(
                () -> {
                  try (RawFrames.Connection other = new RawFrames.Connection(server.address())) {
                    hello(other);
                    byte[] small = {1, 2, 3, 4, 5, 6, 7, 8};
                    for (int i = 0; i < 20; i++) {
                      other.write(
                          RawFrames.request(300, 2L * i + 2, write("s" + i), List.of(small)));
                      assertThat(other.read().meta()).isEqualTo(newArray(newArray(newInteger(0))));
                      other.write(
                          RawFrames.request(
                              301,
                              2L * i + 3,
                              newArray(newArray(newString("s" + i)), newArray(newInteger(-1))),
                              List.of()));
                      assertThat(other.read().bodies().get(0)).isEqualTo(small);
                    }
                    return 20;
                  } catch (IOException e) {
                    throw new AssertionError(e);
                  }
                });
        assertThat(others.get(20, TimeUnit.SECONDS)).isEqualTo(20);
        System.out.println(
            "[faults] client that stops reading (32 x 4 MiB replies pending): 20 put+get round"
                + " trips of another client served; server connection memory "
                + (connections.allocatedBytes() >> 20)
                + " MiB, "
                + connections.outstandingBuffers()
                + " buffers while stalled");
      } finally {
        stalled.close();
      }
      Await.until(
          () -> connections.outstandingBuffers() == baseline,
          "the stalled connection's reply buffers freed after it closed");
    } finally {
      server.close();
      engine.close();
      connections.close();
    }
  }

  private static MsgpackValue write(String key) {
    return newArray(
        newBoolean(true),
        newInteger(1),
        newBoolean(true),
        newBoolean(false),
        newArray(newString(key)));
  }

  private static void hello(RawFrames.Connection c) throws IOException {
    c.write(RawFrames.request(1, 1, newArray(newNil()), List.of()));
    assertThat(c.read().isError()).isFalse();
  }
}
