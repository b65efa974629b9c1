package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Bounded vectored reads and writes: the windows they take and the bytes they move. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class VectoredIoTest {
  private static ByteBuffer[] buffers(int... sizes) {
    ByteBuffer[] out = new ByteBuffer[sizes.length];
    for (int i = 0; i < sizes.length; i++) {
      out[i] = ByteBuffer.allocateDirect(sizes[i]);
    }
    return out;
  }

  @Test
  void shouldHandAVectoredCallOnlyTheNextSmallBuffersWithinTheCaps() {
    int small = 4096;
    int large = VectoredIo.SINGLE_MIN_BYTES;
    assertThat(VectoredIo.window(buffers(small, small, large, small), 0)).isEqualTo(2);
    assertThat(VectoredIo.window(buffers(small, large), 0)).isEqualTo(1);
    assertThat(VectoredIo.window(new ByteBuffer[200], 200)).isZero();
    int[] many = new int[200];
    java.util.Arrays.fill(many, 16);
    assertThat(VectoredIo.window(buffers(many), 0)).isEqualTo(VectoredIo.WINDOW_BUFFERS);
    int[] bytesBound = new int[20];
    java.util.Arrays.fill(bytesBound, 100 << 10);
    assertThat(VectoredIo.window(buffers(bytesBound), 3))
        .isEqualTo((int) (VectoredIo.WINDOW_BYTES / (100 << 10)) + 1);
  }

  @Test
  void shouldMoveMixedBuffersCompletelyAndInOrder() throws Exception {
    long seed = 0x5EC7L;
    Random random = new Random(seed);
    int[] sizes = new int[300];
    for (int i = 0; i < sizes.length; i++) {
      int kind = random.nextInt(4);
      sizes[i] = kind == 0 ? 0 : kind == 1 ? random.nextInt(64) : kind == 2 ? 40_000 : 300_000;
    }
    ByteBuffer[] out = buffers(sizes);
    ByteBuffer[] in = buffers(sizes);
    for (ByteBuffer b : out) {
      byte[] bytes = new byte[b.remaining()];
      random.nextBytes(bytes);
      b.put(bytes).flip();
    }
    try (ServerSocketChannel server =
            ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        SocketChannel client = SocketChannel.open(server.getLocalAddress());
        SocketChannel accepted = server.accept()) {
      CompletableFuture<Void> writer =
          CompletableFuture.runAsync(
              () -> {
                try {
                  VectoredIo.writeFully(client, out);
                } catch (IOException e) {
                  throw new java.io.UncheckedIOException(e);
                }
              });
      VectoredIo.readFully(accepted, in, "a test frame");
      writer.get(20, TimeUnit.SECONDS);
    }
    for (int i = 0; i < sizes.length; i++) {
      assertThat(in[i].hasRemaining()).as("seed=%d buffer %d filled", seed, i).isFalse();
      assertThat(in[i].flip()).as("seed=%d buffer %d", seed, i).isEqualTo(out[i].rewind());
    }
  }
}
