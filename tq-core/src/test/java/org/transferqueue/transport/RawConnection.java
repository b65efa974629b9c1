package org.transferqueue.transport;

import java.io.EOFException;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.List;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.FrameHeaderFlyweight;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.codec.MsgpackValue;
import org.transferqueue.config.HostPort;

/**
 * A hand-driven client socket for protocol tests: writes arbitrary bytes and well-formed or broken
 * frames, reads raw replies. Heap buffers only; test code.
 */
final class RawConnection implements AutoCloseable {
  final SocketChannel channel;

  RawConnection(HostPort address) throws IOException {
    this(SocketChannel.open(new InetSocketAddress(address.host(), address.port())));
  }

  RawConnection(SocketChannel channel) {
    this.channel = channel;
  }

  void write(byte[] bytes) throws IOException {
    ByteBuffer buffer = ByteBuffer.wrap(bytes);
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  /** A frame whose header fields may lie about what follows. */
  static byte[] header(
      int version, int type, int flags, long id, long metadataLength, long bodyLength) {
    ByteBuffer b =
        ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(FrameDescriptor.MAGIC);
    b.putShort((short) version);
    b.putShort((short) type);
    b.putInt(flags);
    b.putInt((int) metadataLength);
    b.putLong(id);
    b.putLong(bodyLength);
    return b.array();
  }

  /** A well-formed frame with the given body table (which may lie) and bodies. */
  static byte[] frame(int type, long id, long[] table, byte[] appMeta, byte[]... bodies)
      throws IOException {
    return frame(type, 0, id, table, appMeta, bodies);
  }

  /** A frame with flags, for playing the server's part. */
  static byte[] frame(int type, int flags, long id, long[] table, byte[] appMeta, byte[]... bodies)
      throws IOException {
    byte[] section = MsgpackValue.section(table, appMeta);
    long bodyLength = 0;
    for (byte[] body : bodies) {
      bodyLength += body.length;
    }
    long offset = FrameDescriptor.bodyOffset(section.length);
    byte[] frame = new byte[Math.toIntExact(offset + bodyLength)];
    MemorySegment segment = MemorySegment.ofArray(frame);
    new FrameHeaderFlyweight()
        .wrap(segment)
        .writeHeader(type, flags, id, section.length, bodyLength)
        .putMetadata(MemorySegment.ofArray(section));
    int at = (int) offset;
    for (byte[] body : bodies) {
      System.arraycopy(body, 0, frame, at, body.length);
      at += body.length;
    }
    return frame;
  }

  /** A decoded reply: header fields, error code/message if an error reply, application meta. */
  record RawReply(int type, int flags, long id, int errorCode, String errorMessage, byte[] meta) {
    boolean isError() {
      return (flags & FrameDescriptor.FLAG_ERROR) != 0;
    }
  }

  /** Reads one reply frame (bodies skipped). */
  RawReply readReply() throws IOException {
    ByteBuffer header = readExactly(FrameDescriptor.HEADER_LENGTH);
    FrameHeaderFlyweight fly =
        new FrameHeaderFlyweight().wrap(MemorySegment.ofArray(header.array()));
    int metadataLength = (int) fly.metadataLength();
    long padded = FrameDescriptor.bodyOffset(metadataLength) - FrameDescriptor.HEADER_LENGTH;
    byte[] section = readExactly((int) padded).array();
    readExactly(Math.toIntExact(fly.bodyLength()));
    MsgpackReader unpacker =
        new MsgpackReader(java.util.Arrays.copyOf(section, metadataLength), "reply");
    int bodies = unpacker.readArrayHeader();
    for (int i = 0; i < bodies; i++) {
      unpacker.readLong();
    }
    int offset = (int) unpacker.offset();
    byte[] meta = java.util.Arrays.copyOfRange(section, offset, metadataLength);
    int code = 0;
    String message = null;
    if ((fly.flags() & FrameDescriptor.FLAG_ERROR) != 0) {
      unpacker.readArrayHeader();
      code = Math.toIntExact(unpacker.readLong());
      message = unpacker.readString();
    }
    return new RawReply(fly.type(), fly.flags(), fly.correlationId(), code, message, meta);
  }

  /** Reads until the peer closes; returns the number of bytes read. */
  long readUntilClosed() throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
    long total = 0;
    while (true) {
      buffer.clear();
      int n;
      try {
        n = channel.read(buffer);
      } catch (IOException e) {
        return total; // reset by the peer counts as closed
      }
      if (n < 0) {
        return total;
      }
      total += n;
    }
  }

  private ByteBuffer readExactly(int length) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(length);
    while (buffer.hasRemaining()) {
      if (channel.read(buffer) < 0) {
        throw new EOFException("peer closed after " + buffer.position() + " of " + length);
      }
    }
    return buffer;
  }

  static byte[] hello(long id, String token) throws IOException {
    MsgpackValue meta =
        MsgpackValue.newArray(
            token == null ? MsgpackValue.newNil() : MsgpackValue.newString(token));
    return frame(MessageDescriptor.TYPE_HELLO, id, new long[0], meta.pack());
  }

  static List<Long> none() {
    return List.of();
  }

  void closeQuietly() {
    try {
      channel.close();
    } catch (IOException e) {
      // Test tear-down: the socket is being abandoned anyway.
    }
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
