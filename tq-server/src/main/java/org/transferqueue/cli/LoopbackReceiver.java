package org.transferqueue.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.memory.RootAllocator;

/**
 * The receiving end of {@code tq bench}'s loopback baseline, run as a child process: listens on an
 * ephemeral port of 127.0.0.1, prints {@code listening on 127.0.0.1:PORT}, accepts one connection
 * and then, until the sender closes it, reads a message of an 8-byte big-endian length followed by
 * that many bytes (into one reused off-heap buffer) and answers each message with one byte. The
 * bytes are discarded: the sender times its writes until the answer to measure what the loopback
 * interface alone moves.
 */
public final class LoopbackReceiver {
  private static final int CHUNK = 4 << 20;

  private LoopbackReceiver() {}

  /**
   * Runs the receiver.
   *
   * @param args ignored
   * @throws IOException when the socket fails
   */
  public static void main(String[] args) throws IOException {
    PrintStream out = System.out;
    try (RootAllocator allocator = RootAllocator.builder().name("loopback-receiver").build();
        NativeBuffer chunk = allocator.allocate(CHUNK);
        ServerSocketChannel server = ServerSocketChannel.open()) {
      server.bind(new InetSocketAddress("127.0.0.1", 0));
      InetSocketAddress bound = (InetSocketAddress) server.getLocalAddress();
      out.println("listening on 127.0.0.1:" + bound.getPort());
      out.flush();
      try (SocketChannel channel = server.accept()) {
        ByteBuffer header = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.BIG_ENDIAN);
        ByteBuffer ack = ByteBuffer.wrap("k".getBytes(StandardCharsets.US_ASCII));
        ByteBuffer data = chunk.segment().asByteBuffer();
        while (true) {
          header.clear();
          if (!readFully(channel, header)) {
            return;
          }
          long left = header.flip().getLong();
          while (left > 0) {
            data.clear().limit((int) Math.min(CHUNK, left));
            int n = channel.read(data);
            if (n < 0) {
              return;
            }
            left -= n;
          }
          ack.clear();
          while (ack.hasRemaining()) {
            channel.write(ack);
          }
        }
      }
    }
  }

  private static boolean readFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
    while (buffer.hasRemaining()) {
      if (channel.read(buffer) < 0) {
        return false;
      }
    }
    return true;
  }
}
