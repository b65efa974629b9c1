package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;

/**
 * A server that sends part of a reply frame and then nothing, keeping the connection open: the call
 * fails at its deadline, and the connection, whose stream cannot recover, is replaced, so the next
 * call on the same client succeeds.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StalledReplyTest {
  private static final Duration SHORT = Duration.ofMillis(500);

  /** Forwards to {@code target}; on the first connection, the second reply stops after 40 bytes. */
  private static final class StallingProxy implements AutoCloseable {
    final ServerSocketChannel listener;
    final List<SocketChannel> open = new ArrayList<>();
    final AtomicInteger connections = new AtomicInteger();
    final HostPort target;

    StallingProxy(HostPort target) throws IOException {
      this.target = target;
      listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
      Thread.ofVirtual().start(this::accept);
    }

    HostPort address() {
      return new HostPort("127.0.0.1", listener.socket().getLocalPort());
    }

    private void accept() {
      try {
        while (true) {
          SocketChannel client = listener.accept();
          SocketChannel server =
              SocketChannel.open(new InetSocketAddress(target.host(), target.port()));
          synchronized (open) {
            open.add(client);
            open.add(server);
          }
          boolean stall = connections.incrementAndGet() == 1;
          Thread.ofVirtual().start(() -> copy(client, server));
          Thread.ofVirtual().start(() -> replies(server, client, stall));
        }
      } catch (IOException e) {
        // Closed.
      }
    }

    private static void copy(SocketChannel from, SocketChannel to) {
      ByteBuffer buffer = ByteBuffer.allocate(8192);
      try {
        while (from.read(buffer.clear()) >= 0) {
          buffer.flip();
          while (buffer.hasRemaining()) {
            to.write(buffer);
          }
        }
      } catch (IOException e) {
        // Closed.
      }
    }

    private static void replies(SocketChannel from, SocketChannel to, boolean stall) {
      try {
        for (int reply = 0; ; reply++) {
          ByteBuffer header = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH);
          fill(from, header);
          header.order(ByteOrder.LITTLE_ENDIAN);
          long rest =
              FrameDescriptor.bodyOffset(Integer.toUnsignedLong(header.getInt(12)))
                  - FrameDescriptor.HEADER_LENGTH
                  + header.getLong(24);
          ByteBuffer frame = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH + (int) rest);
          frame.put(header.array());
          fill(from, frame);
          frame.flip();
          if (stall && reply == 1) {
            // Lie: a metadata length the bytes never reach, then silence on an open connection.
            frame.order(ByteOrder.LITTLE_ENDIAN).putInt(12, 1000);
            frame.limit(40);
          }
          while (frame.hasRemaining()) {
            to.write(frame);
          }
          if (stall && reply == 1) {
            return;
          }
        }
      } catch (IOException e) {
        // Closed.
      }
    }

    private static void fill(SocketChannel channel, ByteBuffer buffer) throws IOException {
      while (buffer.hasRemaining()) {
        if (channel.read(buffer) < 0) {
          throw new IOException("closed");
        }
      }
    }

    @Override
    public void close() throws IOException {
      listener.close();
      synchronized (open) {
        for (SocketChannel channel : open) {
          channel.close();
        }
      }
    }
  }

  @Test
  void shouldReplaceTheConnectionWhenTheServerStallsInsideAReplyFrame(BufferAllocator allocator)
      throws IOException {
    // Shared memory off: the proxy counts replies, and the stalled one must be the call's own, not
    // the SHM_ATTACH of the connection's handshake.
    TransportConfig config =
        TransportConfig.builder()
            .sharedMemory(false)
            .connectionsPerPeer(1)
            .connectTimeout(Duration.ofSeconds(5))
            .defaultCallTimeout(SHORT)
            .shutdownGracePeriod(Duration.ofSeconds(5))
            .build();
    try (TransportServer server = TransportServer.builder(config, allocator).start();
        StallingProxy proxy = new StallingProxy(server.address());
        TransportClient client = new TransportClient(config, allocator)) {
      assertThatThrownBy(() -> client.ping(proxy.address(), SHORT))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.DEADLINE_EXCEEDED));
      // Without the stalled connection being aborted, every later call on it would time out too.
      client.ping(proxy.address(), Duration.ofSeconds(10));
      assertThat(proxy.connections).hasValue(2);
    }
  }
}
