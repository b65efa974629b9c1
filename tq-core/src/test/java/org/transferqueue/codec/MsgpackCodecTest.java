package org.transferqueue.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Seeds;

/**
 * The in-place msgpack reader and gather writer behind {@link ValueEncoder} and {@link
 * ValueDecoder}: byte-identical to msgpack-core, strings of every header width, strict UTF-8, and
 * truncated input reported as corrupt from heap and native frames alike.
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
  void shouldMatchMsgpackCoreAtEveryContainerBinaryAndExtensionWidth() throws IOException {
    for (int size : new int[] {0, 1, 2, 4, 8, 15, 16, 17, 255, 256, 65535, 65536}) {
      List<Object> nils = Arrays.asList(new Object[size]);
      Map<Object, Object> map = new LinkedHashMap<>();
      for (long i = 0; i < size; i++) {
        map.put(i, i % 3 == 0 ? null : -i);
      }
      byte[] bytes = new byte[size];
      Arrays.fill(bytes, (byte) 7);
      OpaqueValue opaque = new OpaqueValue(ValueDescriptor.EXT_CALLABLE, bytes);
      for (Object value : List.of(nils, map, bytes, opaque)) {
        String what = value.getClass().getSimpleName() + " of size " + size;
        byte[] main = ValueEncoder.encode(value).mainFrame();
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
  void shouldEncodeLikeMsgpackCoreAndDecodeBackWhenValuesAreRandom(BufferAllocator allocator)
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

  // ---- the reference: msgpack-core's own packer ----

  private static byte[] referencePack(Object value) throws IOException {
    try (MessageBufferPacker packer = MessagePack.newDefaultBufferPacker()) {
      pack(packer, value, new int[1]);
      return packer.toByteArray();
    }
  }

  private static void pack(MessagePacker packer, Object value, int[] tensorCount)
      throws IOException {
    switch (value) {
      case null -> packer.packNil();
      case Boolean b -> packer.packBoolean(b);
      case Long l -> packer.packLong(l);
      case Integer i -> packer.packInt(i);
      case Short s -> packer.packShort(s);
      case Byte b -> packer.packByte(b);
      case BigInteger big -> packer.packBigInteger(big);
      case Double d -> packer.packDouble(d);
      case Float f -> packer.packDouble(f);
      case String s -> packer.packString(s);
      case byte[] bytes -> packer.packBinaryHeader(bytes.length).writePayload(bytes);
      case OpaqueValue opaque -> {
        byte[] payload = opaque.payload();
        packer.packExtensionTypeHeader((byte) opaque.extensionType(), payload.length);
        packer.writePayload(payload);
      }
      case Tensor tensor -> {
        try (MessageBufferPacker ref = MessagePack.newDefaultBufferPacker()) {
          ref.packArrayHeader(3).packString(tensor.dtype().torchName());
          ref.packArrayHeader(tensor.shape().length);
          for (long dim : tensor.shape()) {
            ref.packLong(dim);
          }
          ref.packInt(++tensorCount[0]);
          byte[] payload = ref.toByteArray();
          packer.packExtensionTypeHeader(ValueDescriptor.EXT_TENSOR, payload.length);
          packer.writePayload(payload);
        }
      }
      case Collection<?> list -> {
        packer.packArrayHeader(list.size());
        for (Object element : list) {
          pack(packer, element, tensorCount);
        }
      }
      case Map<?, ?> map -> {
        packer.packMapHeader(map.size());
        for (Map.Entry<?, ?> entry : map.entrySet()) {
          pack(packer, entry.getKey(), tensorCount);
          pack(packer, entry.getValue(), tensorCount);
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
