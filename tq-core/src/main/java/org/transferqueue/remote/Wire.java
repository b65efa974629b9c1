package org.transferqueue.remote;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;

/**
 * Small msgpack helpers for the remote messages: a writer that never throws checked exceptions and
 * a reader that turns any malformed input into {@code PROTOCOL_ERROR}. Not thread-safe; one per
 * message.
 */
final class Wire {
  private Wire() {}

  /** Builds one metadata section. */
  static final class Writer {
    private final MessageBufferPacker packer = MessagePack.newDefaultBufferPacker();

    Writer array(int size) {
      return run(() -> packer.packArrayHeader(size));
    }

    Writer bool(boolean value) {
      return run(() -> packer.packBoolean(value));
    }

    Writer i64(long value) {
      return run(() -> packer.packLong(value));
    }

    Writer str(String value) {
      return run(() -> packer.packString(value));
    }

    Writer bin(byte[] value) {
      return run(
          () -> {
            packer.packBinaryHeader(value.length);
            packer.writePayload(value);
          });
    }

    Writer longs(long[] values) {
      array(values.length);
      for (long v : values) {
        i64(v);
      }
      return this;
    }

    Writer strings(List<String> values) {
      array(values.size());
      values.forEach(this::str);
      return this;
    }

    byte[] toBytes() {
      try (packer) {
        return packer.toByteArray();
      } catch (IOException e) {
        throw new TqException(ErrorCode.INTERNAL, "closing a msgpack buffer failed: " + e, e);
      }
    }

    private Writer run(IoAction action) {
      try {
        action.run();
        return this;
      } catch (IOException e) {
        throw new TqException(ErrorCode.INTERNAL, "msgpack encoding failed: " + e, e);
      }
    }
  }

  /** Reads one metadata section; every failure is a {@code PROTOCOL_ERROR} naming the message. */
  static final class Reader implements AutoCloseable {
    private final MessageUnpacker unpacker;
    private final String what;

    Reader(byte[] bytes, String what) {
      this.unpacker = MessagePack.newDefaultUnpacker(bytes);
      this.what = what;
    }

    int array() {
      return get(unpacker::unpackArrayHeader);
    }

    /** Reads an array header and checks its size against a bound before anything is allocated. */
    int array(long max) {
      int n = array();
      if (n > max) {
        throw malformed("array of " + n + " entries > max=" + max);
      }
      return n;
    }

    boolean bool() {
      return get(unpacker::unpackBoolean);
    }

    long i64() {
      return get(unpacker::unpackLong);
    }

    int i32() {
      return get(unpacker::unpackInt);
    }

    String str() {
      return get(unpacker::unpackString);
    }

    byte[] bin() {
      return get(
          () -> {
            int n = unpacker.unpackBinaryHeader();
            return unpacker.readPayload(n);
          });
    }

    long[] longs(long max) {
      int n = array(max);
      long[] out = new long[n];
      for (int i = 0; i < n; i++) {
        out[i] = i64();
      }
      return out;
    }

    List<String> strings(long max) {
      int n = array(max);
      List<String> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(str());
      }
      return out;
    }

    ProtocolException malformed(String detail) {
      return new ProtocolException(ErrorCode.PROTOCOL_ERROR, "malformed " + what + ": " + detail);
    }

    private <T> T get(IoSupplier<T> supplier) {
      try {
        return supplier.get();
      } catch (IOException | MessagePackException e) {
        throw malformed(e.toString());
      }
    }

    @Override
    public void close() {
      try {
        unpacker.close();
      } catch (IOException e) {
        // Reading from a byte array: closing releases nothing that can fail.
      }
    }
  }

  @FunctionalInterface
  private interface IoAction {
    void run() throws IOException;
  }

  @FunctionalInterface
  private interface IoSupplier<T> {
    T get() throws IOException;
  }
}
