package org.transferqueue.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.List;
import org.transferqueue.codec.FrameDescriptor;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.codec.MsgpackValue;
import org.transferqueue.config.HostPort;

/**
 * Hand-built frames of docs/PROTOCOL.md for hostile-input tests, and a blocking raw connection that
 * writes bytes and reads whole replies. Heap buffers; test code only.
 */
final class RawFrames {
  private RawFrames() {}

  /** A reply frame: header fields, the decoded metadata after the body table, and its bodies. */
  record Reply(int type, int flags, long id, MsgpackValue meta, List<byte[]> bodies) {
    boolean isError() {
      return (flags & FrameDescriptor.FLAG_ERROR) != 0;
    }

    /** The error code of an error reply. */
    int errorCode() {
      return meta.asArrayValue().get(0).asIntegerValue().toInt();
    }
  }

  /** The metadata section: a body table then {@code appMeta} (may be any bytes). */
  static byte[] section(long[] table, byte[] appMeta) {
    return MsgpackValue.section(table, appMeta);
  }

  static byte[] pack(MsgpackValue value) {
    return value.pack();
  }

  /** A frame with the given header fields (which may lie), section and bodies. */
  static byte[] frame(
      int magic,
      int version,
      int type,
      int flags,
      long id,
      long metadataLength,
      long bodyLength,
      byte[] section,
      List<byte[]> bodies) {
    long padded = FrameDescriptor.bodyOffset(section.length);
    int total = (int) padded;
    for (byte[] body : bodies) {
      total += body.length;
    }
    ByteBuffer b = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(magic);
    b.putShort((short) version);
    b.putShort((short) type);
    b.putInt(flags);
    b.putInt((int) metadataLength);
    b.putLong(id);
    b.putLong(bodyLength);
    b.put(section);
    b.position((int) padded);
    for (byte[] body : bodies) {
      b.put(body);
    }
    return b.array();
  }

  /** A well-formed request frame. */
  static byte[] request(int type, long id, MsgpackValue appMeta, List<byte[]> bodies) {
    long[] table = bodies.stream().mapToLong(body -> body.length).toArray();
    byte[] section = section(table, pack(appMeta));
    long bodyLength = bodies.stream().mapToLong(body -> body.length).sum();
    return frame(
        FrameDescriptor.MAGIC,
        FrameDescriptor.CURRENT_VERSION,
        type,
        0,
        id,
        section.length,
        bodyLength,
        section,
        bodies);
  }

  /** A blocking connection that writes raw bytes and reads replies. */
  static final class Connection implements AutoCloseable {
    final SocketChannel channel;

    Connection(HostPort address) {
      try {
        channel = SocketChannel.open(new InetSocketAddress(address.host(), address.port()));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }

    void write(byte[] bytes) throws IOException {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
    }

    /** Reads one reply, or returns null at end of stream. */
    Reply read() throws IOException {
      ByteBuffer header = ByteBuffer.allocate(FrameDescriptor.HEADER_LENGTH);
      if (!fill(header)) {
        return null;
      }
      header.flip().order(ByteOrder.LITTLE_ENDIAN);
      int magic = header.getInt(0);
      if (magic != FrameDescriptor.MAGIC) {
        throw new IOException("reply magic=" + Integer.toHexString(magic));
      }
      int type = Short.toUnsignedInt(header.getShort(6));
      int flags = header.getInt(8);
      long metadataLength = Integer.toUnsignedLong(header.getInt(12));
      long id = header.getLong(16);
      long bodyLength = header.getLong(24);
      ByteBuffer section =
          ByteBuffer.allocate(
              (int) (FrameDescriptor.bodyOffset(metadataLength) - FrameDescriptor.HEADER_LENGTH));
      ByteBuffer body = ByteBuffer.allocate(Math.toIntExact(bodyLength));
      if (!fill(section) || !fill(body)) {
        return null;
      }
      MsgpackReader unpacker =
          new MsgpackReader(
              java.util.Arrays.copyOf(section.array(), (int) metadataLength), "reply");
      int count = unpacker.readArrayHeader();
      List<byte[]> bodies = new java.util.ArrayList<>();
      int at = 0;
      for (int i = 0; i < count; i++) {
        int length = Math.toIntExact(unpacker.readLong());
        bodies.add(java.util.Arrays.copyOfRange(body.array(), at, at + length));
        at += length;
      }
      MsgpackValue meta =
          unpacker.hasRemaining() ? MsgpackValue.read(unpacker) : MsgpackValue.newNil();
      return new Reply(type, flags, id, meta, bodies);
    }

    private boolean fill(ByteBuffer buffer) throws IOException {
      while (buffer.hasRemaining()) {
        if (channel.read(buffer) < 0) {
          return false;
        }
      }
      return true;
    }

    /** Closes the socket; a blocked read or write on it ends. */
    void abort() {
      close();
    }

    @Override
    public void close() {
      try {
        channel.close();
      } catch (IOException e) {
        // Closing a socket the test is done with; nothing to recover.
      }
    }
  }
}
