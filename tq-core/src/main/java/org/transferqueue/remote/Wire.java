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
import org.transferqueue.Strings;
import org.transferqueue.TqException;

/**
 * Small msgpack helpers for the remote messages: a writer that never throws checked exceptions and
 * a reader that turns any malformed input into {@code PROTOCOL_ERROR}. Strings are UTF-8 both ways:
 * the writer refuses a string with a lone surrogate ({@code INVALID_ARGUMENT}, {@link Strings}),
 * the reader bytes that are not valid UTF-8 ({@code PROTOCOL_ERROR}); neither replaces characters.
 * Not thread-safe; one per message.
 */
final class Wire {
  private Wire() {}

  /**
   * Builds one metadata section. Each call packs straight into the packer, without a lambda or a
   * boxed value per element (these run once per cell on the data path).
   */
  static final class Writer {
    /**
     * Chunks of 1 KiB: most messages are a few hundred bytes, and the default packer's first chunk
     * of 8 KiB was most of a small request's garbage; larger messages just take more chunks.
     */
    private static final MessagePack.PackerConfig PACKER =
        MessagePack.DEFAULT_PACKER_CONFIG.withBufferSize(1024);

    /** Keys up to this length take the scratch path of {@link #keys}. */
    private static final int KEY_SCRATCH_BYTES = 256;

    private final MessageBufferPacker packer = PACKER.newBufferPacker();
    private byte[] scratch;

    Writer array(int size) {
      try {
        packer.packArrayHeader(size);
        return this;
      } catch (IOException e) {
        throw failed(e);
      }
    }

    Writer bool(boolean value) {
      try {
        packer.packBoolean(value);
        return this;
      } catch (IOException e) {
        throw failed(e);
      }
    }

    Writer i64(long value) {
      try {
        packer.packLong(value);
        return this;
      } catch (IOException e) {
        throw failed(e);
      }
    }

    Writer str(String value) {
      try {
        packer.packString(Strings.checkWellFormed(value, "string"));
        return this;
      } catch (IOException e) {
        throw failed(e);
      }
    }

    Writer bin(byte[] value) {
      try {
        packer.packBinaryHeader(value.length);
        packer.writePayload(value);
        return this;
      } catch (IOException e) {
        throw failed(e);
      }
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
      for (int i = 0; i < values.size(); i++) {
        str(values.get(i));
      }
      return this;
    }

    /**
     * Like {@link #strings}, byte for byte, for many short keys: an ASCII string is copied into one
     * scratch array of this writer instead of being encoded into a new array of its own.
     */
    Writer keys(List<String> values) {
      array(values.size());
      for (int i = 0; i < values.size(); i++) {
        key(values.get(i));
      }
      return this;
    }

    private void key(String value) {
      int n = value.length();
      if (n > KEY_SCRATCH_BYTES) {
        str(value);
        return;
      }
      if (scratch == null) {
        scratch = new byte[KEY_SCRATCH_BYTES];
      }
      for (int c = 0; c < n; c++) {
        char ch = value.charAt(c);
        if (ch >= 0x80) {
          str(value); // UTF-8 needs more than one byte: the packer encodes it
          return;
        }
        scratch[c] = (byte) ch;
      }
      try {
        packer.packRawStringHeader(n);
        packer.writePayload(scratch, 0, n);
      } catch (IOException e) {
        throw failed(e);
      }
    }

    byte[] toBytes() {
      try (packer) {
        return packer.toByteArray();
      } catch (IOException e) {
        throw new TqException(ErrorCode.INTERNAL, "closing a msgpack buffer failed: " + e, e);
      }
    }

    private static TqException failed(IOException e) {
      return new TqException(ErrorCode.INTERNAL, "msgpack encoding failed: " + e, e);
    }
  }

  /**
   * Reads one metadata section; every failure is a {@code PROTOCOL_ERROR} naming the message.
   * Primitive reads neither box nor capture a lambda.
   */
  static final class Reader implements AutoCloseable {
    private final MessageUnpacker unpacker;
    private final byte[] bytes;
    private final int length;
    private final String what;

    Reader(byte[] bytes, String what) {
      this.unpacker = MessagePack.newDefaultUnpacker(bytes);
      this.bytes = bytes;
      this.length = bytes.length;
      this.what = what;
    }

    int array() {
      try {
        return unpacker.unpackArrayHeader();
      } catch (IOException | MessagePackException e) {
        throw malformed(e.toString());
      }
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
      try {
        return unpacker.unpackBoolean();
      } catch (IOException | MessagePackException e) {
        throw malformed(e.toString());
      }
    }

    long i64() {
      try {
        return unpacker.unpackLong();
      } catch (IOException | MessagePackException e) {
        throw malformed(e.toString());
      }
    }

    int i32() {
      try {
        return unpacker.unpackInt();
      } catch (IOException | MessagePackException e) {
        throw malformed(e.toString());
      }
    }

    /**
     * Reads a string as strict UTF-8 ({@link Strings#decodeUtf8}), without the unpacker's 16 KiB
     * decoding buffer per message.
     */
    String str() {
      try {
        byte[] utf8 = payload(unpacker.unpackRawStringHeader());
        return utf8(utf8, 0, utf8.length);
      } catch (IOException | MessagePackException e) {
        throw malformed(e.toString());
      }
    }

    private String utf8(byte[] source, int offset, int n) {
      String value = Strings.decodeUtf8(source, offset, n);
      if (value == null) {
        throw malformed("a string of " + n + " bytes is not valid UTF-8");
      }
      return value;
    }

    byte[] bin() {
      try {
        return payload(unpacker.unpackBinaryHeader());
      } catch (IOException | MessagePackException e) {
        throw malformed(e.toString());
      }
    }

    /** The next {@code n} bytes, checked against what the message holds before allocating. */
    private byte[] payload(int n) throws IOException {
      long left = length - unpacker.getTotalReadBytes();
      if (n < 0 || n > left) {
        throw malformed(
            "a length of " + Integer.toUnsignedString(n) + " > " + left + " bytes left");
      }
      return unpacker.readPayload(n);
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

    /**
     * Like {@link #strings}, with the same results and errors, for many short keys: a string is
     * decoded straight from the message's bytes, without a copy of its payload first.
     */
    List<String> keys(long max) {
      int n = array(max);
      List<String> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(key());
      }
      return out;
    }

    private String key() {
      try {
        int at = (int) unpacker.getTotalReadBytes();
        int header;
        int n;
        switch (unpacker.getNextFormat()) {
          case FIXSTR -> {
            header = 1;
            n = bytes[at] & 0x1f;
          }
          case STR8 -> {
            header = 2;
            n = at + 1 < length ? bytes[at + 1] & 0xff : -1;
          }
          case STR16 -> {
            header = 3;
            n = at + 2 < length ? (bytes[at + 1] & 0xff) << 8 | (bytes[at + 2] & 0xff) : -1;
          }
          default -> {
            return str(); // other formats (and their errors) as before
          }
        }
        if (n < 0 || (long) at + header + n > length) {
          return str(); // names the missing bytes
        }
        unpacker.skipValue();
        return utf8(bytes, at + header, n);
      } catch (IOException | MessagePackException e) {
        throw malformed(e.toString());
      }
    }

    ProtocolException malformed(String detail) {
      return new ProtocolException(ErrorCode.PROTOCOL_ERROR, "malformed " + what + ": " + detail);
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
}
