package org.transferqueue.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Seeds;

/**
 * The in-place msgpack reader and gather writer behind {@link ValueEncoder} and {@link
 * ValueDecoder}: byte-identical to the msgpack spec's smallest formats (checked against literal
 * headers and a reference encoder written from the spec's format table), strings of every header
 * width, strict UTF-8, and truncated input reported as corrupt from heap and native frames alike.
 */
@ExtendWith(LeakCheckExtension.class)
class MsgpackCodecTest {
  private static final HexFormat HEX = HexFormat.of();
  private static final int[] STRING_LENGTHS = {0, 31, 32, 255, 256, 65535, 65536, 1 << 20};
  private static final String[] UNITS = {"a", "é", "你", "🌍"}; // 1-, 2-, 3-, 4-byte UTF-8

  @Test
  void shouldRoundTripStringsOfEveryHeaderWidthFromHeapAndNativeFrames(BufferAllocator allocator)
      throws IOException {
    for (String unit : UNITS) {
      int unitBytes = unit.getBytes(StandardCharsets.UTF_8).length;
      for (int length : STRING_LENGTHS) {
        String value = text(unit, length / unitBytes, length % unitBytes);
        assertThat(value.getBytes(StandardCharsets.UTF_8)).hasSize(length);
        String what = "unit=" + unit + " length=" + length;
        EncodedValue encoded = ValueEncoder.encode(value);
        byte[] main = encoded.mainFrame();
        assertThat(main).as(what).isEqualTo(referencePack(value));
        assertThat(encoded.mainFrameSize()).as(what).isEqualTo(main.length);
        assertThat(ValueDecoder.decode(MemorySegment.ofArray(main), List.of(), "v"))
            .as(what)
            .isEqualTo(value);
        assertThat(ValueDecoder.decode(MemorySegment.ofArray(main).asReadOnly(), List.of(), "v"))
            .as(what)
            .isEqualTo(value);
        try (NativeBuffer packed = allocator.allocate(encoded.packedSize())) {
          encoded.packInto(packed.segment());
          assertThat(PackedValueCodec.unpack(packed.segment(), "v")).as(what).isEqualTo(value);
          MemorySegment mainFrame = new PackedBufferReader().wrap(packed.segment(), "v").item(0);
          assertThat(mainFrame.toArray(ValueLayout.JAVA_BYTE)).as(what).isEqualTo(main);
        }
      }
    }
  }

  @Test
  void shouldMatchTheSpecAtEveryContainerBinaryAndExtensionWidth() throws IOException {
    // Literal headers from the msgpack spec for each size: array, map, bin, ext (EXT_CALLABLE 02).
    Map<Integer, String[]> headers = new LinkedHashMap<>();
    headers.put(0, new String[] {"90", "80", "c400", "c70002"});
    headers.put(1, new String[] {"91", "81", "c401", "d402"});
    headers.put(2, new String[] {"92", "82", "c402", "d502"});
    headers.put(4, new String[] {"94", "84", "c404", "d602"});
    headers.put(8, new String[] {"98", "88", "c408", "d702"});
    headers.put(15, new String[] {"9f", "8f", "c40f", "c70f02"});
    headers.put(16, new String[] {"dc0010", "de0010", "c410", "d802"});
    headers.put(17, new String[] {"dc0011", "de0011", "c411", "c71102"});
    headers.put(255, new String[] {"dc00ff", "de00ff", "c4ff", "c7ff02"});
    headers.put(256, new String[] {"dc0100", "de0100", "c50100", "c8010002"});
    headers.put(65535, new String[] {"dcffff", "deffff", "c5ffff", "c8ffff02"});
    headers.put(65536, new String[] {"dd00010000", "df00010000", "c600010000", "c90001000002"});
    for (int size : new int[] {0, 1, 2, 4, 8, 15, 16, 17, 255, 256, 65535, 65536}) {
      List<Object> nils = Arrays.asList(new Object[size]);
      Map<Object, Object> map = new LinkedHashMap<>();
      for (long i = 0; i < size; i++) {
        map.put(i, i % 3 == 0 ? null : -i);
      }
      byte[] bytes = new byte[size];
      Arrays.fill(bytes, (byte) 7);
      OpaqueValue opaque = new OpaqueValue(ValueDescriptor.EXT_CALLABLE, bytes);
      List<Object> values = List.of(nils, map, bytes, opaque);
      for (int kind = 0; kind < values.size(); kind++) {
        Object value = values.get(kind);
        String what = value.getClass().getSimpleName() + " of size " + size;
        byte[] main = ValueEncoder.encode(value).mainFrame();
        assertThat(HEX.formatHex(main)).as(what).startsWith(headers.get(size)[kind]);
        assertThat(main).as(what).isEqualTo(referencePack(value));
        Object back = ValueDecoder.decode(MemorySegment.ofArray(main), List.of(), "v");
        assertThat(RandomValues.deepEquals(value, back)).as(what).isTrue();
      }
    }
  }

  @Test
  void shouldWriteTheMainFrameAtAnOffsetWhenAskedDirectly() {
    List<Object> value = List.of("x".repeat(300), "short", new byte[400], 7L);
    EncodedValue encoded = ValueEncoder.encode(value);
    byte[] target = new byte[(int) encoded.mainFrameSize() + 10];
    encoded.writeMainFrame(MemorySegment.ofArray(target), 5);
    assertThat(Arrays.copyOfRange(target, 5, target.length - 5)).isEqualTo(encoded.mainFrame());
    assertThat(Arrays.copyOfRange(target, 0, 5)).containsOnly(0);
    assertThatThrownBy(() -> encoded.writeMainFrame(MemorySegment.ofArray(target), 11))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  @Test
  void shouldKeepAnEncodedU_FFFDWhenTheInputIsValidUtf8() {
    String value = "ok \uFFFD and \uFFFD".repeat(40);
    assertThat(ValueDecoder.decode(encodedSegment(value), List.of(), "v")).isEqualTo(value);
  }

  @Test
  void shouldRejectMalformedUtf8AsCorruptWhenDecodingStrings(BufferAllocator allocator) {
    String[] malformed = {
      "80", // lone continuation byte
      "c328", // 2-byte lead, bad continuation
      "c0af", // overlong '/'
      "e282", // truncated 3-byte sequence
      "eda080", // UTF-16 surrogate
      "f4908080", // above U+10FFFF
      "ff", // never valid
    };
    for (String bad : malformed) {
      byte[] utf8 = HEX.parseHex(bad);
      for (int padding : new int[] {0, 40, 300}) {
        byte[] payload = new byte[padding + utf8.length];
        Arrays.fill(payload, (byte) 'a');
        System.arraycopy(utf8, 0, payload, padding, utf8.length);
        byte[] frame = strFrame(payload);
        String what = "bytes=" + bad + " padding=" + padding;
        assertCorrupt(MemorySegment.ofArray(frame), "UTF-8", what);
        try (NativeBuffer copy = nativeCopy(allocator, frame)) {
          assertCorrupt(copy.segment(), "UTF-8", what);
        }
      }
    }
  }

  @Test
  void shouldRejectEveryTruncatedHeaderAsCorruptFromHeapAndNativeFrames(BufferAllocator allocator) {
    String[] frames = {
      "d9",
      "da00",
      "db000000", // str 8, 16, 32 headers
      "c4",
      "c500",
      "c6000000", // bin 8, 16, 32
      "dc00",
      "dd000000", // array 16, 32
      "de00",
      "df000000", // map 16, 32
      "c7",
      "c701",
      "c8000a",
      "c9000000",
      "d4", // ext 8, 16, 32, fixext 1
      "cc",
      "cd00",
      "ce000000",
      "cf00000000000000", // uint 8..64
      "d0",
      "d100",
      "d2000000",
      "d300000000000000", // int 8..64
      "ca000000",
      "cb00000000000000", // float 32, 64
      "a5616263",
      "d905616263",
      "c40501",
      "93c0c0",
      "82a161",
      "", // payload short
    };
    for (String hex : frames) {
      byte[] frame = HEX.parseHex(hex);
      assertCorrupt(MemorySegment.ofArray(frame), "", "frame=" + hex);
      try (NativeBuffer copy = nativeCopy(allocator, frame)) {
        assertCorrupt(copy.segment().asSlice(0, frame.length), "", "native frame=" + hex);
      }
    }
  }

  @Test
  void shouldReportLengthsAboveTwoToThe31AsInvalidMsgpack() {
    for (String hex : new String[] {"db80000000", "c680000000", "dd80000000", "c98000000003"}) {
      assertCorrupt(MemorySegment.ofArray(HEX.parseHex(hex)), "exceeds 2^31 - 1", hex);
    }
  }

  @Test
  void shouldDecodeEveryIntegerAndFloatWidthAsLongOrDouble() {
    assertThat(decodeHex("cc80")).isEqualTo(128L);
    assertThat(decodeHex("cdffff")).isEqualTo(65535L);
    assertThat(decodeHex("ceffffffff")).isEqualTo(4294967295L);
    assertThat(decodeHex("cf7fffffffffffffff")).isEqualTo(Long.MAX_VALUE);
    assertThat(decodeHex("cf8000000000000000")).isEqualTo(BigInteger.ONE.shiftLeft(63));
    assertThat(decodeHex("cfffffffffffffffff"))
        .isEqualTo(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE));
    assertThat(decodeHex("d080")).isEqualTo(-128L);
    assertThat(decodeHex("d18000")).isEqualTo(-32768L);
    assertThat(decodeHex("d280000000")).isEqualTo((long) Integer.MIN_VALUE);
    assertThat(decodeHex("d38000000000000000")).isEqualTo(Long.MIN_VALUE);
    assertThat(decodeHex("e0")).isEqualTo(-32L);
    assertThat(decodeHex("7f")).isEqualTo(127L);
    assertThat(decodeHex("ca3fc00000")).isEqualTo(1.5);
    assertThat(decodeHex("d6010a0b0c0d"))
        .isEqualTo(new OpaqueValue(ValueDescriptor.EXT_OPAQUE, HEX.parseHex("0a0b0c0d")));
  }

  @Test
  void shouldEncodeLikeTheSpecAndDecodeBackWhenValuesAreRandom(BufferAllocator allocator)
      throws IOException {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    RandomValues tensors = new RandomValues(random, allocator);
    try {
      for (int round = 0; round < 300; round++) {
        Object value = value(random, tensors, 0);
        String what = "seed=" + seed + " round=" + round;
        EncodedValue encoded = ValueEncoder.encode(value);
        byte[] main = encoded.mainFrame();
        assertThat(HEX.formatHex(main)).as(what).isEqualTo(HEX.formatHex(referencePack(value)));
        List<MemorySegment> aux = new ArrayList<>();
        encoded.auxTensors().forEach(t -> aux.add(t.segment()));
        Object expected = normalize(value);
        Object fromHeap = ValueDecoder.decode(MemorySegment.ofArray(main), aux, "v");
        assertThat(RandomValues.deepEquals(expected, fromHeap)).as(what).isTrue();
        try (NativeBuffer packed = allocator.allocate(encoded.packedSize())) {
          assertThat(encoded.packInto(packed.segment())).isEqualTo(encoded.packedSize());
          Object fromNative = PackedValueCodec.unpack(packed.segment(), "v");
          assertThat(RandomValues.deepEquals(expected, fromNative)).as(what).isTrue();
        }
      }
    } finally {
      tensors.tensors().forEach(Tensor::close);
    }
  }

  // ---- random values that reach every msgpack format, including the borrowed payloads ----

  private static Object value(Random random, RandomValues tensors, int depth) {
    int kind = random.nextInt(depth >= 3 ? 10 : 13);
    return switch (kind) {
      case 0 -> null;
      case 1 -> random.nextBoolean();
      case 2 -> integer(random);
      case 3 ->
          random.nextBoolean()
              ? (Object) random.nextGaussian()
              : (Object) (float) random.nextGaussian();
      case 4, 5 -> string(random);
      case 6 -> bytes(random, random.nextBoolean() ? 300 : 70_000);
      case 7 -> tensors.tensor();
      case 8 -> BigInteger.ONE.shiftLeft(63).add(BigInteger.valueOf(random.nextLong() >>> 1));
      case 9 -> opaque(random);
      case 10, 11 -> {
        int size = boundary(random, 20, 16);
        Collection<Object> list =
            random.nextInt(4) == 0 ? new LinkedHashSet<>() : new ArrayList<>();
        for (int i = 0; i < size; i++) {
          list.add(value(random, tensors, depth + 1));
        }
        yield list;
      }
      default -> {
        int size = boundary(random, 20, 16);
        Map<Object, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < size; i++) {
          Object key = random.nextBoolean() ? string(random) : (Object) random.nextLong();
          map.put(key, value(random, tensors, depth + 1));
        }
        yield map;
      }
    };
  }

  private static Object integer(Random random) {
    long[] edges = {0, 1L << 5, 1L << 7, 1L << 8, 1L << 15, 1L << 16, 1L << 31, 1L << 32};
    long edge = edges[random.nextInt(edges.length)];
    long near = (random.nextBoolean() ? edge : -edge) + random.nextInt(3) - 1;
    return switch (random.nextInt(5)) {
      case 0 -> random.nextLong();
      case 1 -> (int) near;
      case 2 -> (short) near;
      case 3 -> (byte) near;
      default -> near;
    };
  }

  private static String string(Random random) {
    int length =
        random.nextBoolean()
            ? random.nextInt(40)
            : STRING_LENGTHS[random.nextInt(STRING_LENGTHS.length - 1)] + random.nextInt(3) - 1;
    length = Math.max(0, length);
    StringBuilder builder = new StringBuilder(length);
    boolean ascii = random.nextBoolean();
    while (builder.length() < length) {
      if (ascii) {
        builder.append((char) (' ' + random.nextInt(95)));
      } else {
        builder.append(UNITS[random.nextInt(UNITS.length)]);
      }
    }
    return builder.toString();
  }

  private static byte[] bytes(Random random, int upTo) {
    byte[] bytes = new byte[boundary(random, upTo, 256)];
    random.nextBytes(bytes);
    return bytes;
  }

  private static OpaqueValue opaque(Random random) {
    int[] lengths = {0, 1, 2, 3, 4, 8, 15, 16, 17, 32, 255, 256, 65535, 65536};
    byte[] payload = new byte[lengths[random.nextInt(lengths.length)]];
    random.nextBytes(payload);
    return new OpaqueValue(
        random.nextBoolean() ? ValueDescriptor.EXT_OPAQUE : ValueDescriptor.EXT_CALLABLE, payload);
  }

  /** A size near {@code edge} half of the time, else below {@code upTo}. */
  private static int boundary(Random random, int upTo, int edge) {
    return random.nextBoolean()
        ? random.nextInt(upTo)
        : Math.max(0, Math.min(upTo - 1, edge + random.nextInt(3) - 1));
  }

  /** What a value decodes as: narrower integers and small BigIntegers as Long, floats as Double. */
  private static Object normalize(Object value) {
    return switch (value) {
      case Integer i -> (long) i;
      case Short s -> (long) s;
      case Byte b -> (long) b;
      case Float f -> (double) f;
      case BigInteger big when big.bitLength() <= 63 -> big.longValue();
      case Collection<?> list -> list.stream().map(MsgpackCodecTest::normalize).toList();
      case Map<?, ?> map -> {
        Map<Object, Object> out = new LinkedHashMap<>();
        map.forEach((k, v) -> out.put(normalize(k), normalize(v)));
        yield out;
      }
      case null, default -> value;
    };
  }

  // ---- the reference: an encoder written from the msgpack spec's format table ----

  @Test
  void shouldEncodeTheSpecsLiteralBytesInTheReferenceEncoder() throws IOException {
    Object[][] cases = {
      {null, "c0"},
      {false, "c2"},
      {true, "c3"},
      {0L, "00"},
      {127L, "7f"},
      {128L, "cc80"},
      {256L, "cd0100"},
      {65536L, "ce00010000"},
      {1L << 32, "cf0000000100000000"},
      {-1L, "ff"},
      {-32L, "e0"},
      {-33L, "d0df"},
      {-129L, "d1ff7f"},
      {-32769L, "d2ffff7fff"},
      {Long.MIN_VALUE, "d38000000000000000"},
      {BigInteger.ONE.shiftLeft(63), "cf8000000000000000"},
      {1.5, "cb3ff8000000000000"},
      {1.5f, "cb3ff8000000000000"},
      {"", "a0"},
      {"a".repeat(31), "bf" + "61".repeat(31)},
      {"a".repeat(32), "d920" + "61".repeat(32)},
      {"é", "a2c3a9"},
    };
    for (Object[] c : cases) {
      assertThat(HEX.formatHex(referencePack(c[0]))).as("%s", c[0]).isEqualTo(c[1]);
      assertThat(HEX.formatHex(ValueEncoder.encode(c[0]).mainFrame()))
          .as("%s", c[0])
          .isEqualTo(c[1]);
    }
  }

  private static byte[] referencePack(Object value) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    pack(out, value, new int[1]);
    return out.toByteArray();
  }

  /** Writes {@code format} then {@code bytes} big-endian bytes of {@code value}. */
  private static void put(ByteArrayOutputStream out, int format, long value, int bytes) {
    out.write(format);
    for (int shift = 8 * (bytes - 1); shift >= 0; shift -= 8) {
      out.write((int) (value >>> shift));
    }
  }

  /** The spec's integer formats, smallest first. */
  private static void packInteger(ByteArrayOutputStream out, long v) {
    if (v >= 0 && v <= 0x7f) {
      out.write((int) v); // positive fixint
    } else if (v < 0 && v >= -32) {
      out.write((int) v); // negative fixint
    } else if (v > 0) {
      if (v <= 0xffL) {
        put(out, 0xcc, v, 1);
      } else if (v <= 0xffffL) {
        put(out, 0xcd, v, 2);
      } else if (v <= 0xffff_ffffL) {
        put(out, 0xce, v, 4);
      } else {
        put(out, 0xcf, v, 8);
      }
    } else if (v >= Byte.MIN_VALUE) {
      put(out, 0xd0, v, 1);
    } else if (v >= Short.MIN_VALUE) {
      put(out, 0xd1, v, 2);
    } else if (v >= Integer.MIN_VALUE) {
      put(out, 0xd2, v, 4);
    } else {
      put(out, 0xd3, v, 8);
    }
  }

  /** A header of three widths: the fix form (if any) up to {@code fixMax}, then 8/16/32 bits. */
  private static void packHeader(
      ByteArrayOutputStream out, int n, int fix, int fixMax, int f8, int f16, int f32) {
    if (fix >= 0 && n <= fixMax) {
      out.write(fix | n);
    } else if (f8 >= 0 && n <= 0xff) {
      put(out, f8, n, 1);
    } else if (n <= 0xffff) {
      put(out, f16, n, 2);
    } else {
      put(out, f32, n, 4);
    }
  }

  private static void packExtension(ByteArrayOutputStream out, int type, byte[] payload) {
    int fixext =
        switch (payload.length) {
          case 1 -> 0xd4;
          case 2 -> 0xd5;
          case 4 -> 0xd6;
          case 8 -> 0xd7;
          case 16 -> 0xd8;
          default -> -1;
        };
    if (fixext >= 0) {
      out.write(fixext);
    } else {
      packHeader(out, payload.length, -1, 0, 0xc7, 0xc8, 0xc9);
    }
    out.write(type);
    out.writeBytes(payload);
  }

  private static void pack(ByteArrayOutputStream out, Object value, int[] tensorCount)
      throws IOException {
    switch (value) {
      case null -> out.write(0xc0);
      case Boolean b -> out.write(b ? 0xc3 : 0xc2);
      case Long l -> packInteger(out, l);
      case Integer i -> packInteger(out, i);
      case Short s -> packInteger(out, s);
      case Byte b -> packInteger(out, b);
      case BigInteger big when big.bitLength() <= 63 -> packInteger(out, big.longValue());
      case BigInteger big -> put(out, 0xcf, big.longValue(), 8);
      case Double d -> put(out, 0xcb, Double.doubleToRawLongBits(d), 8);
      case Float f -> put(out, 0xcb, Double.doubleToRawLongBits(f), 8);
      case String s -> {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        packHeader(out, utf8.length, 0xa0, 31, 0xd9, 0xda, 0xdb);
        out.writeBytes(utf8);
      }
      case byte[] bytes -> {
        packHeader(out, bytes.length, -1, 0, 0xc4, 0xc5, 0xc6);
        out.writeBytes(bytes);
      }
      case OpaqueValue opaque -> packExtension(out, opaque.extensionType(), opaque.payload());
      case Tensor tensor -> {
        ByteArrayOutputStream ref = new ByteArrayOutputStream();
        ref.write(0x93);
        pack(ref, tensor.dtype().torchName(), tensorCount);
        packHeader(ref, tensor.shape().length, 0x90, 15, -1, 0xdc, 0xdd);
        for (long dim : tensor.shape()) {
          packInteger(ref, dim);
        }
        packInteger(ref, ++tensorCount[0]);
        packExtension(out, ValueDescriptor.EXT_TENSOR, ref.toByteArray());
      }
      case Collection<?> list -> {
        packHeader(out, list.size(), 0x90, 15, -1, 0xdc, 0xdd);
        for (Object element : list) {
          pack(out, element, tensorCount);
        }
      }
      case Map<?, ?> map -> {
        packHeader(out, map.size(), 0x80, 15, -1, 0xde, 0xdf);
        for (Map.Entry<?, ?> entry : map.entrySet()) {
          pack(out, entry.getKey(), tensorCount);
          pack(out, entry.getValue(), tensorCount);
        }
      }
      default -> throw new IllegalArgumentException(value.getClass().getName());
    }
  }

  // ---- helpers ----

  private static String text(String unit, int count, int asciiTail) {
    return unit.repeat(count) + "z".repeat(asciiTail);
  }

  private static byte[] strFrame(byte[] payload) {
    byte[] frame = new byte[5 + payload.length];
    frame[0] = (byte) 0xDB; // str 32
    MemorySegment.ofArray(frame)
        .set(
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
            1,
            payload.length);
    System.arraycopy(payload, 0, frame, 5, payload.length);
    return frame;
  }

  private static MemorySegment encodedSegment(Object value) {
    return MemorySegment.ofArray(ValueEncoder.encode(value).mainFrame());
  }

  private static Object decodeHex(String hex) {
    return ValueDecoder.decode(MemorySegment.ofArray(HEX.parseHex(hex)), List.of(), "v");
  }

  private static NativeBuffer nativeCopy(BufferAllocator allocator, byte[] frame) {
    NativeBuffer buffer = allocator.allocate(Math.max(1, frame.length));
    MemorySegment.copy(frame, 0, buffer.segment(), ValueLayout.JAVA_BYTE, 0, frame.length);
    return buffer;
  }

  private static void assertCorrupt(MemorySegment frame, String detail, String what) {
    assertThatThrownBy(() -> ValueDecoder.decode(frame, List.of(), "k"))
        .as(what)
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
        .hasMessageContaining("value k")
        .hasMessageContaining(detail);
  }
}
