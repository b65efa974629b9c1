package org.transferqueue.codec;

import java.math.BigInteger;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A msgpack value tree for tests that build, mutate and inspect raw messages: read with {@link
 * #read(MsgpackReader)} and written with {@link #pack()} through the codec cursor, so tests need no
 * second msgpack library. Integers are longs and floats are written as float 64, which covers every
 * message of the protocol. Values are immutable and compare by content.
 */
public sealed interface MsgpackValue {
  /** The nil value. */
  MsgpackValue NIL = new NilValue();

  /** nil. */
  record NilValue() implements MsgpackValue {
    @Override
    public String toString() {
      return "null";
    }
  }

  /** true or false. */
  record BooleanValue(boolean value) implements MsgpackValue {
    @Override
    public String toString() {
      return Boolean.toString(value);
    }
  }

  /**
   * An integer: a long, or with {@code unsigned} the bits of a uint 64 of 2^63 and above.
   *
   * @param value the value, or the unsigned bits
   * @param unsigned whether {@code value} holds a uint 64 of 2^63 and above
   */
  record IntegerValue(long value, boolean unsigned) implements MsgpackValue {
    /** The value, which must fit a long. */
    public long toLong() {
      if (unsigned) {
        throw new ArithmeticException(this + " exceeds 2^63 - 1");
      }
      return value;
    }

    /** The value, which must fit an int. */
    public int toInt() {
      return Math.toIntExact(toLong());
    }

    @Override
    public String toString() {
      return unsigned ? Long.toUnsignedString(value) : Long.toString(value);
    }
  }

  /** A float, written as float 64. */
  record FloatValue(double value) implements MsgpackValue {
    @Override
    public String toString() {
      return Double.toString(value);
    }
  }

  /** A UTF-8 string. */
  record StringValue(String value) implements MsgpackValue {
    @Override
    public String toString() {
      return '"' + value + '"';
    }
  }

  /** A binary. */
  record BinaryValue(byte[] bytes) implements MsgpackValue {
    /** A copy of the bytes. */
    public byte[] asByteArray() {
      return bytes.clone();
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof BinaryValue b && Arrays.equals(bytes, b.bytes);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
      return "bin(" + HexFormat.of().formatHex(bytes) + ")";
    }
  }

  /** An extension value. */
  record ExtensionValue(byte type, byte[] data) implements MsgpackValue {
    @Override
    public boolean equals(Object o) {
      return o instanceof ExtensionValue e && type == e.type && Arrays.equals(data, e.data);
    }

    @Override
    public int hashCode() {
      return 31 * type + Arrays.hashCode(data);
    }

    @Override
    public String toString() {
      return "ext(" + type + "," + HexFormat.of().formatHex(data) + ")";
    }
  }

  /** An array. */
  record ArrayValue(List<MsgpackValue> list) implements MsgpackValue, Iterable<MsgpackValue> {
    /** An array of these elements (copied). */
    public ArrayValue {
      list = Collections.unmodifiableList(List.copyOf(list));
    }

    /** Element {@code i}. */
    public MsgpackValue get(int i) {
      return list.get(i);
    }

    @Override
    public Iterator<MsgpackValue> iterator() {
      return list.iterator();
    }

    @Override
    public String toString() {
      return list.toString();
    }
  }

  /** A map, in insertion order. */
  record MapValue(Map<MsgpackValue, MsgpackValue> map) implements MsgpackValue {
    /** A map of these entries (copied, order kept). */
    public MapValue {
      map = Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }

    /** The entries in order. */
    public Set<Map.Entry<MsgpackValue, MsgpackValue>> entrySet() {
      return map.entrySet();
    }

    @Override
    public String toString() {
      return map.toString();
    }
  }

  /** Whether this is an array. */
  default boolean isArrayValue() {
    return this instanceof ArrayValue;
  }

  /** This array. */
  default ArrayValue asArrayValue() {
    return (ArrayValue) this;
  }

  /** Whether this is a map. */
  default boolean isMapValue() {
    return this instanceof MapValue;
  }

  /** This map. */
  default MapValue asMapValue() {
    return (MapValue) this;
  }

  /** Whether this is an integer. */
  default boolean isIntegerValue() {
    return this instanceof IntegerValue;
  }

  /** This integer. */
  default IntegerValue asIntegerValue() {
    return (IntegerValue) this;
  }

  /** Whether this is a string. */
  default boolean isStringValue() {
    return this instanceof StringValue;
  }

  /** Whether this is a binary. */
  default boolean isBinaryValue() {
    return this instanceof BinaryValue;
  }

  /** This binary. */
  default BinaryValue asBinaryValue() {
    return (BinaryValue) this;
  }

  /** Whether this is nil. */
  default boolean isNilValue() {
    return this instanceof NilValue;
  }

  /** nil. */
  static MsgpackValue newNil() {
    return NIL;
  }

  /** A boolean. */
  static MsgpackValue newBoolean(boolean value) {
    return new BooleanValue(value);
  }

  /** An integer. */
  static MsgpackValue newInteger(long value) {
    return new IntegerValue(value, false);
  }

  /** An integer from -2^63 to 2^64 - 1. */
  static MsgpackValue newInteger(BigInteger value) {
    if (value.bitLength() <= 63) {
      return new IntegerValue(value.longValue(), false);
    }
    if (value.signum() < 0 || value.bitLength() > 64) {
      throw new IllegalArgumentException(value + " is not a msgpack integer");
    }
    return new IntegerValue(value.longValue(), true);
  }

  /** A float 64. */
  static MsgpackValue newFloat(double value) {
    return new FloatValue(value);
  }

  /** A string. */
  static MsgpackValue newString(String value) {
    return new StringValue(value);
  }

  /** A binary (copied). */
  static MsgpackValue newBinary(byte[] bytes) {
    return new BinaryValue(bytes.clone());
  }

  /** An extension (payload copied). */
  static MsgpackValue newExtension(byte type, byte[] data) {
    return new ExtensionValue(type, data.clone());
  }

  /** An array of these elements. */
  static MsgpackValue newArray(MsgpackValue... elements) {
    return new ArrayValue(List.of(elements));
  }

  /** An array of these elements. */
  static MsgpackValue newArray(List<? extends MsgpackValue> elements) {
    return new ArrayValue(List.copyOf(elements));
  }

  /** A map of these entries, in their iteration order. */
  static MsgpackValue newMap(Map<? extends MsgpackValue, ? extends MsgpackValue> entries) {
    return new MapValue(new LinkedHashMap<>(entries));
  }

  /**
   * Reads the next value.
   *
   * @throws MsgpackException if the bytes are not a msgpack value this model holds
   */
  static MsgpackValue read(MsgpackReader in) {
    return switch (in.peekType()) {
      case NIL -> {
        in.tryReadNil();
        yield NIL;
      }
      case BOOLEAN -> new BooleanValue(in.readBoolean());
      case INTEGER -> {
        if (in.peekFormat() != MsgpackReader.UINT64) {
          yield new IntegerValue(in.readLong(), false);
        }
        in.readFormat();
        yield switch (in.readUint64()) {
          case Long l -> new IntegerValue(l, false);
          case BigInteger big -> new IntegerValue(big.longValue(), true);
          default -> throw new IllegalStateException();
        };
      }
      case FLOAT -> new FloatValue(in.readDouble());
      case STRING -> new StringValue(in.readString());
      case BINARY -> new BinaryValue(in.readBinary());
      case EXTENSION -> {
        int length = in.readExtensionHeader();
        byte type = in.extensionType();
        yield new ExtensionValue(type, in.readBytes(length));
      }
      case ARRAY -> {
        int n = in.readArrayHeader();
        MsgpackValue[] elements = new MsgpackValue[Math.toIntExact(Math.min(n, in.remaining()))];
        if (elements.length < n) {
          throw in.invalid(in.offset(), "array of " + n + " elements is longer than the input");
        }
        for (int i = 0; i < n; i++) {
          elements[i] = read(in);
        }
        yield new ArrayValue(Arrays.asList(elements));
      }
      case MAP -> {
        int n = in.readMapHeader();
        if (n > in.remaining()) {
          throw in.invalid(in.offset(), "map of " + n + " entries is longer than the input");
        }
        LinkedHashMap<MsgpackValue, MsgpackValue> map = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
          MsgpackValue key = read(in);
          map.put(key, read(in));
        }
        yield new MapValue(map);
      }
      case NEVER_USED -> throw in.invalid(in.offset(), "format byte 0xc1 is never used");
    };
  }

  /**
   * Reads one whole message.
   *
   * @throws MsgpackException if the bytes are not exactly one msgpack value
   */
  static MsgpackValue unpack(byte[] bytes) {
    MsgpackReader in = new MsgpackReader(bytes, "test value");
    MsgpackValue value = read(in);
    if (in.hasRemaining()) {
      throw in.invalid(in.offset(), "trailing bytes");
    }
    return value;
  }

  /** Writes this value. */
  default void write(MsgpackWriter out) {
    switch (this) {
      case NilValue n -> out.writeNil();
      case BooleanValue b -> out.writeBoolean(b.value());
      case IntegerValue i when i.unsigned() -> out.writeUint64(i.value());
      case IntegerValue i -> out.writeLong(i.value());
      case FloatValue f -> out.writeDouble(f.value());
      case StringValue s -> out.writeString(s.value(), "test string");
      case BinaryValue b -> out.writeBinary(b.bytes());
      case ExtensionValue e -> out.writeExtension(e.type(), e.data());
      case ArrayValue a -> {
        out.writeArrayHeader(a.list().size());
        for (MsgpackValue element : a.list()) {
          element.write(out);
        }
      }
      case MapValue m -> {
        out.writeMapHeader(m.map().size());
        for (Map.Entry<MsgpackValue, MsgpackValue> e : m.map().entrySet()) {
          e.getKey().write(out);
          e.getValue().write(out);
        }
      }
    }
  }

  /** This value as a whole message. */
  default byte[] pack() {
    MsgpackWriter out = new MsgpackWriter(64);
    write(out);
    return out.toByteArray();
  }

  /**
   * A frame's metadata section: the body table of these lengths, then {@code appMeta} (any bytes).
   */
  static byte[] section(long[] table, byte[] appMeta) {
    MsgpackWriter out = new MsgpackWriter(16 + 9 * table.length + appMeta.length);
    out.writeArrayHeader(table.length);
    for (long length : table) {
      out.writeLong(length);
    }
    out.writeRaw(appMeta, 0, appMeta.length);
    return out.toByteArray();
  }
}
