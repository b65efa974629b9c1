package org.transferqueue.remote;

import java.util.ArrayList;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.Strings;
import org.transferqueue.codec.MsgpackException;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.codec.MsgpackWriter;

/**
 * Small msgpack helpers for the remote messages over the {@code codec} cursor ({@link
 * MsgpackWriter}, {@link MsgpackReader}): a writer of chained calls and a reader that turns any
 * malformed input into {@code PROTOCOL_ERROR}. Strings are UTF-8 both ways: the writer refuses a
 * string with a lone surrogate ({@code INVALID_ARGUMENT}, {@link Strings}), the reader bytes that
 * are not valid UTF-8 ({@code PROTOCOL_ERROR}); neither replaces characters. Not thread-safe; one
 * per message.
 */
public final class Wire {
  private Wire() {}

  /**
   * Builds one metadata section. Each call writes straight into the cursor, without a lambda or a
   * boxed value per element (these run once per cell on the data path).
   */
  public static final class Writer {
    /** A first array of 1 KiB: most messages are a few hundred bytes; larger ones grow it. */
    private static final int INITIAL_BYTES = 1024;

    /** Starts an empty section. */
    public Writer() {}

    private final MsgpackWriter out = new MsgpackWriter(INITIAL_BYTES);

    /**
     * Writes an array header.
     *
     * @param size the number of elements that follow
     * @return this writer
     */
    public Writer array(int size) {
      out.writeArrayHeader(size);
      return this;
    }

    /**
     * Writes a boolean.
     *
     * @param value the value
     * @return this writer
     */
    public Writer bool(boolean value) {
      out.writeBoolean(value);
      return this;
    }

    /**
     * Writes an integer in its shortest msgpack form.
     *
     * @param value the value
     * @return this writer
     */
    public Writer i64(long value) {
      out.writeLong(value);
      return this;
    }

    /**
     * Writes a string as UTF-8.
     *
     * @param value the string
     * @return this writer
     * @throws org.transferqueue.TqException {@code INVALID_ARGUMENT} for a string with a lone
     *     surrogate
     */
    public Writer str(String value) {
      out.writeString(value, "string");
      return this;
    }

    /**
     * Writes a binary.
     *
     * @param value the bytes
     * @return this writer
     */
    public Writer bin(byte[] value) {
      out.writeBinary(value);
      return this;
    }

    /**
     * Writes an array of integers.
     *
     * @param values the integers
     * @return this writer
     */
    public Writer longs(long[] values) {
      array(values.length);
      for (long v : values) {
        i64(v);
      }
      return this;
    }

    /**
     * Writes an array of strings.
     *
     * @param values the strings
     * @return this writer
     */
    public Writer strings(List<String> values) {
      array(values.size());
      for (int i = 0; i < values.size(); i++) {
        str(values.get(i));
      }
      return this;
    }

    /**
     * The message written.
     *
     * @return its bytes
     */
    public byte[] toBytes() {
      return out.toByteArray();
    }
  }

  /**
   * Reads one metadata section; every failure is a {@code PROTOCOL_ERROR} naming the message.
   * Primitive reads neither box nor capture a lambda.
   */
  public static final class Reader implements AutoCloseable {
    private final MsgpackReader in;
    private final String what;

    /**
     * Reads a message.
     *
     * @param bytes the message; not copied
     * @param what names the message in errors
     */
    public Reader(byte[] bytes, String what) {
      this.in = new MsgpackReader(bytes, what);
      this.what = what;
    }

    /**
     * Reads an array header.
     *
     * @return the number of elements
     */
    public int array() {
      try {
        return in.readArrayHeader();
      } catch (MsgpackException e) {
        throw malformed(e);
      }
    }

    /**
     * Reads an array header and checks its size against a bound before anything is allocated.
     *
     * @param max the most elements accepted
     * @return the number of elements
     */
    public int array(long max) {
      int n = array();
      if (n > max) {
        throw malformed("array of " + n + " entries > max=" + max);
      }
      return n;
    }

    /**
     * Reads a boolean.
     *
     * @return the value
     */
    public boolean bool() {
      try {
        return in.readBoolean();
      } catch (MsgpackException e) {
        throw malformed(e);
      }
    }

    /**
     * Reads an integer that fits a long.
     *
     * @return the value
     */
    public long i64() {
      try {
        return in.readLong();
      } catch (MsgpackException e) {
        throw malformed(e);
      }
    }

    /**
     * Reads an integer that fits an int.
     *
     * @return the value
     */
    public int i32() {
      long v = i64();
      if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
        throw malformed("integer " + v + " is out of int range");
      }
      return (int) v;
    }

    /**
     * Reads a string as strict UTF-8 ({@link Strings#decodeUtf8}), straight from the message.
     *
     * @return the string
     */
    public String str() {
      try {
        return in.readString(payload(in.readStringHeader()));
      } catch (MsgpackException e) {
        throw malformed(e);
      }
    }

    /**
     * Reads a binary.
     *
     * @return a copy of its bytes
     */
    public byte[] bin() {
      try {
        return in.readBytes(payload(in.readBinaryHeader()));
      } catch (MsgpackException e) {
        throw malformed(e);
      }
    }

    /** Checks a payload length against what the message holds before anything is allocated. */
    private int payload(int n) {
      long left = in.remaining();
      if (n > left) {
        throw malformed("a length of " + n + " > " + left + " bytes left");
      }
      return n;
    }

    /**
     * Reads an array of integers.
     *
     * @param max the most elements accepted
     * @return the integers
     */
    public long[] longs(long max) {
      int n = array(max);
      long[] out = new long[n];
      for (int i = 0; i < n; i++) {
        out[i] = i64();
      }
      return out;
    }

    /**
     * Reads an array of strings.
     *
     * @param max the most elements accepted
     * @return the strings
     */
    public List<String> strings(long max) {
      int n = array(max);
      List<String> out = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        out.add(str());
      }
      return out;
    }

    /**
     * The error for a message that is not what its reader expects.
     *
     * @param detail what is wrong
     * @return a {@code PROTOCOL_ERROR} naming the message
     */
    public ProtocolException malformed(String detail) {
      return new ProtocolException(ErrorCode.PROTOCOL_ERROR, "malformed " + what + ": " + detail);
    }

    private ProtocolException malformed(MsgpackException cause) {
      ProtocolException e = malformed(cause.detail() + " at offset " + cause.offset());
      e.initCause(cause);
      return e;
    }

    @Override
    public void close() {
      // Reading from a byte array holds nothing to release; kept so callers scope a reader.
    }
  }
}
