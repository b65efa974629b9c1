package org.transferqueue.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Seeds;

@ExtendWith(LeakCheckExtension.class)
class ValueCodecTest {
  private static final HexFormat HEX = HexFormat.of();

  @Test
  void shouldMatchSpecMainFramesAndPackedBytesWhenEncodingScalars() {
    Map<String, Object> one = Map.of("a", 1L);
    assertEncoded("hi", "a26869", "010000000c00000003000000a26869");
    assertEncoded("hello", "a568656c6c6f", "010000000c00000006000000a568656c6c6f");
    assertEncoded(1L, "01", "010000000c0000000100000001");
    assertEncoded(null, "c0", "010000000c00000001000000c0");
    assertEncoded(one, "81a16101", "010000000c0000000400000081a16101");
    assertEncoded(3.5, "cb400c000000000000", "010000000c00000009000000cb400c000000000000");
  }

  @Test
  void shouldWriteTensorAsExtensionWithAuxFrameWhenNestedInMap(BufferAllocator allocator) {
    try (Tensor t = Tensor.allocate(allocator, DType.FLOAT32, 2)) {
      t.segment().fill((byte) 0x3F);
      EncodedValue encoded = ValueEncoder.encode(Map.of("t", t));
      // {"t": ext8(len 12, type 3) ["float32", [2], 1]}
      assertThat(HEX.formatHex(encoded.mainFrame()))
          .isEqualTo("81a174c70c0393a7666c6f617433329102" + "01");
      assertThat(encoded.frameCount()).isEqualTo(2);
      assertThat(encoded.packedSize()).isEqualTo(4 + 16 + 18 + 8);
      byte[] packed = new byte[(int) encoded.packedSize()];
      encoded.packInto(MemorySegment.ofArray(packed));
      assertThat(HEX.formatHex(packed, 0, 20))
          .isEqualTo("02000000" + "14000000" + "12000000" + "26000000" + "08000000");
      Object back = PackedValueCodec.unpack(MemorySegment.ofArray(packed), "k");
      assertThat(RandomValues.deepEquals(Map.of("t", t), back)).isTrue();
    }
  }

  @Test
  void shouldCopyTheMainFrameIntoANativeBufferOfExactlyItsSize(BufferAllocator allocator) {
    EncodedValue encoded = ValueEncoder.encode(java.util.Map.of("text", "x".repeat(1000), "n", 7L));
    try (org.transferqueue.memory.NativeBuffer frame = encoded.copyMainFrame(allocator)) {
      assertThat(frame.lengthBytes()).isEqualTo(encoded.mainFrameSize());
      assertThat(frame.segment().toArray(java.lang.foreign.ValueLayout.JAVA_BYTE))
          .isEqualTo(encoded.mainFrame());
    }
  }

  @Test
  void shouldRoundTripRandomValuesWhenSeeded(BufferAllocator allocator) {
    long seed = Seeds.seed();
    RandomValues values = new RandomValues(new Random(seed), allocator);
    try {
      for (int round = 0; round < 300; round++) {
        Object value = values.value(0);
        String context = "seed=" + seed + " round=" + round + " value=" + value;
        EncodedValue encoded = ValueEncoder.encode(value);
        List<MemorySegment> frames = encoded.frames();
        Object views = ValueDecoder.decode(frames.get(0), frames.subList(1, frames.size()), "v");
        assertThat(RandomValues.deepEquals(value, views)).as(context).isTrue();

        Object copies =
            ValueDecoder.decodeCopying(
                frames.get(0), frames.subList(1, frames.size()), "v", allocator);
        try {
          assertThat(RandomValues.deepEquals(value, copies)).as(context).isTrue();
        } finally {
          ValueDecoder.closeTensors(copies);
        }

        try (NativeBuffer packed = allocator.allocate(encoded.packedSize())) {
          assertThat(encoded.packInto(packed.segment())).isEqualTo(encoded.packedSize());
          Object unpacked = PackedValueCodec.unpack(packed.segment(), "v");
          assertThat(RandomValues.deepEquals(value, unpacked)).as(context).isTrue();
        }
      }
    } finally {
      values.tensors().forEach(Tensor::close);
    }
  }

  @Test
  void shouldRoundTripTensorsOfEveryDtypeWhenNestedInListsAndMaps(BufferAllocator allocator) {
    List<Tensor> tensors = new ArrayList<>();
    try {
      Map<Object, Object> value = new LinkedHashMap<>();
      for (DType dtype : DType.values()) {
        Tensor tensor = Tensor.allocate(allocator, dtype, 2, 3);
        tensors.add(tensor);
        for (long i = 0; i < tensor.nbytes(); i++) {
          tensor.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (dtype == DType.BOOL ? i & 1 : i));
        }
        value.put(dtype.torchName(), List.of(tensor, Map.of("inner", tensor)));
      }
      Tensor empty = Tensor.allocate(allocator, DType.FLOAT32, 3, 0);
      tensors.add(empty);
      value.put("empty", empty);
      EncodedValue encoded = ValueEncoder.encode(value);
      assertThat(encoded.frameCount()).isEqualTo(1 + 2 * DType.values().length + 1);
      List<MemorySegment> frames = encoded.frames();
      Object back = ValueDecoder.decode(frames.get(0), frames.subList(1, frames.size()), "v");
      assertThat(RandomValues.deepEquals(value, back)).isTrue();
      @SuppressWarnings("unchecked")
      Tensor emptyBack = (Tensor) ((Map<Object, Object>) back).get("empty");
      assertThat(emptyBack.shape()).containsExactly(3, 0);
    } finally {
      tensors.forEach(Tensor::close);
    }
  }

  @Test
  void AS127_shouldRoundTripLongAndUnicodeStringsNextToATensor(BufferAllocator allocator) {
    try (Tensor tensor = Tensor.allocate(allocator, DType.FLOAT16, 4)) {
      tensor.segment().fill((byte) 0x7C); // 0x7C7C: NaN payloads survive bit for bit
      Map<String, Object> value = new LinkedHashMap<>();
      value.put("long", "x".repeat(11_000));
      value.put("hello", "Hello World! ".repeat(1000));
      value.put("unicode", "你好世界🌍🚀 émojis and ümläuts ".repeat(500));
      value.put("tensor", tensor);
      value.put("ints", Map.of(1L, "a", "b", 2L));
      EncodedValue encoded = ValueEncoder.encode(value);
      try (NativeBuffer packed = allocator.allocate(encoded.packedSize())) {
        encoded.packInto(packed.segment());
        Object back = PackedValueCodec.unpack(packed.segment(), "k");
        assertThat(RandomValues.deepEquals(value, back)).isTrue();
      }
    }
  }

  @Test
  void shouldDecodeReadOnlyViewsAndIndependentCopies(BufferAllocator allocator) {
    try (Tensor source = Tensor.allocate(allocator, DType.INT64, 4)) {
      source.segment().fill((byte) 1);
      EncodedValue encoded = ValueEncoder.encode(List.of(source));
      List<MemorySegment> frames = encoded.frames();
      Tensor view =
          (Tensor) ((List<?>) ValueDecoder.decode(frames.get(0), frames.subList(1, 2), "v")).get(0);
      Tensor copy =
          (Tensor)
              ((List<?>)
                      ValueDecoder.decodeCopying(
                          frames.get(0), frames.subList(1, 2), "v", allocator))
                  .get(0);
      try {
        assertThat(view.segment().isReadOnly()).isTrue();
        assertThat(copy.segment().isReadOnly()).isFalse();
        source.segment().fill((byte) 2);
        assertThat(view.contentEquals(source)).isTrue();
        assertThat(copy.contentEquals(source)).isFalse();
        assertThat(copy.segment().get(ValueLayout.JAVA_BYTE, 0)).isEqualTo((byte) 1);
      } finally {
        copy.close();
      }
    }
  }

  @Test
  void shouldFreeEarlierCopiesWhenALaterCopyExceedsTheLimit(BufferAllocator allocator) {
    try (Tensor small = Tensor.allocate(allocator, DType.UINT8, 1000);
        Tensor large = Tensor.allocate(allocator, DType.UINT8, 100_000);
        BufferAllocator child = allocator.newChildAllocator("decode", 64 * 1024)) {
      List<MemorySegment> frames = ValueEncoder.encode(List.of(small, large)).frames();
      assertThatThrownBy(
              () ->
                  ValueDecoder.decodeCopying(
                      frames.get(0), frames.subList(1, frames.size()), "v", child))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.OUT_OF_MEMORY));
      assertThat(child.allocatedBytes()).isZero();
      assertThat(child.outstandingBuffers()).isZero();
    }
  }

  @Test
  void shouldRoundTripColumnOfObjectValues() {
    List<Object> rows = new ArrayList<>();
    rows.add("a");
    rows.add(null);
    rows.add(List.of(1L, "two", 3.0));
    rows.add(Map.of("k", "v"));
    EncodedValue encoded = ValueEncoder.encodeColumn(rows);
    List<Object> back =
        ValueDecoder.decodeColumn(MemorySegment.ofArray(encoded.mainFrame()), List.of(), "col");
    assertThat(RandomValues.deepEquals(rows, back)).isTrue();
    assertThatThrownBy(
            () ->
                ValueDecoder.decodeColumn(
                    MemorySegment.ofArray(ValueEncoder.encode("x").mainFrame()), List.of(), "col"))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
        .hasMessageContaining("col")
        .hasMessageContaining("String");
  }

  @Test
  void shouldRoundTripObjectColumnWithOwnedTensorCopies(BufferAllocator allocator) {
    Tensor tensor = Tensor.allocate(allocator, DType.BFLOAT16, 3);
    tensor.segment().fill((byte) 5);
    List<Object> rows = new ArrayList<>();
    rows.add(Map.of("t", tensor, "n", 1L));
    rows.add(null);
    rows.add("x");
    try (ObjectColumn column = new ObjectColumn(rows)) {
      List<MemorySegment> frames = ValueEncoder.encodeColumn(column).frames();
      try (ObjectColumn back =
          ValueDecoder.decodeObjectColumn(
              frames.get(0), frames.subList(1, frames.size()), "col", allocator)) {
        assertThat(back.contentEquals(column)).isTrue();
        assertThat(((Map<?, ?>) back.get(0)).get("t")).isNotSameAs(tensor);
      }
    }
    byte[] byteKey = ValueEncoder.encode(List.of(Map.of(List.of(1L), 2L))).mainFrame();
    assertThatThrownBy(
            () ->
                ValueDecoder.decodeObjectColumn(
                    MemorySegment.ofArray(byteKey), List.of(), "col", allocator))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
        .hasMessageContaining("col");
  }

  @Test
  void AS132_shouldRoundTripUnsignedAndRejectOutOfRangeIntegers() {
    BigInteger twoTo63 = BigInteger.ONE.shiftLeft(63);
    BigInteger maxU64 = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
    assertThat(roundTrip(twoTo63)).isEqualTo(twoTo63);
    assertThat(roundTrip(maxU64)).isEqualTo(maxU64);
    assertThat(roundTrip(BigInteger.valueOf(-5))).isEqualTo(-5L);
    assertThat(roundTrip(Long.MIN_VALUE)).isEqualTo(Long.MIN_VALUE);
    assertThat(roundTrip(7)).isEqualTo(7L);
    assertThat(roundTrip(1.5f)).isEqualTo(1.5);
    assertThat(roundTrip(Set.of(4L))).isEqualTo(List.of(4L));
    for (BigInteger bad :
        List.of(
            maxU64.add(BigInteger.ONE),
            BigInteger.valueOf(Long.MIN_VALUE).subtract(BigInteger.ONE))) {
      assertThatThrownBy(() -> ValueEncoder.encode(Map.of("n", bad)))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageContaining(bad.toString())
          .hasMessageContaining("$[\"n\"]");
    }
  }

  @Test
  void shouldRejectUnsupportedTypeNamingTypeAndPath() {
    Map<String, Object> value = Map.of("a", List.of(1L, new Object()));
    assertThatThrownBy(() -> ValueEncoder.encode(value))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("java.lang.Object")
        .hasMessageContaining("$[\"a\"][1]");
  }

  @Test
  void shouldRefuseALoneSurrogateNamingItsPathWhenEncoding() {
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("ok", "\uD83D\uDE00 and \uFFFD");
    nested.put("a", List.of("fine", "x\uD800y"));
    assertThatThrownBy(() -> ValueEncoder.encode(nested))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessage(
            "string at $[\"a\"][1] \"x\\uD800y\" is not valid Unicode: lone surrogate \\uD800"
                + " at index 1, which UTF-8 cannot encode");
    assertThatThrownBy(() -> ValueEncoder.encodeColumn(List.of(1L, Map.of("k\uDC00", 1L))))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("$[1][\"k\\uDC00\"]")
        .hasMessageContaining("lone surrogate \\uDC00 at index 1");
  }

  @Test
  void shouldRejectCyclicValueWhenEncoding() {
    List<Object> cycle = new ArrayList<>();
    cycle.add(cycle);
    assertThatThrownBy(() -> ValueEncoder.encode(cycle))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("deeper than " + ValueDescriptor.MAX_DEPTH);
  }

  @Test
  void shouldKeepOpaqueValuesVerbatim() {
    OpaqueValue pickle = new OpaqueValue(ValueDescriptor.EXT_OPAQUE, HEX.parseHex("80054b012e"));
    byte[] main = ValueEncoder.encode(List.of(pickle)).mainFrame();
    assertThat(HEX.formatHex(main)).isEqualTo("91c7050180054b012e");
    assertThat(ValueDecoder.decode(MemorySegment.ofArray(main), List.of(), "v"))
        .isEqualTo(List.of(pickle));
  }

  @Test
  void shouldRejectEveryTruncationOfAnEncodedValueAsCorrupt() {
    Map<String, Object> value = new LinkedHashMap<>();
    value.put("s", "你好世界🌍");
    value.put("l", List.of(Long.MAX_VALUE, -1.0e300, new byte[] {1, 2, 3}));
    value.put("m", Map.of(1L, true));
    byte[] main = ValueEncoder.encode(value).mainFrame();
    for (int length = 0; length < main.length; length++) {
      MemorySegment truncated = MemorySegment.ofArray(main).asSlice(0, length);
      assertCorrupt(truncated, List.of(), "length=" + length, "key 'k'");
    }
  }

  @Test
  void shouldDecodeOrRejectAsCorruptWhenBytesAreMutatedRandomly(BufferAllocator allocator) {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    RandomValues values = new RandomValues(random, allocator);
    try {
      for (int round = 0; round < 500; round++) {
        EncodedValue encoded = ValueEncoder.encode(values.value(0));
        byte[] packed = new byte[(int) encoded.packedSize()];
        encoded.packInto(MemorySegment.ofArray(packed));
        for (int flips = 1 + random.nextInt(3); flips > 0; flips--) {
          packed[random.nextInt(packed.length)] = (byte) random.nextInt(256);
        }
        try {
          ValueDecoder.closeTensors(
              PackedValueCodec.unpackCopying(MemorySegment.ofArray(packed), "k", allocator));
        } catch (TqException e) {
          assertThat(e.code())
              .as("seed=" + seed + " round=" + round)
              .isEqualTo(ErrorCode.CORRUPT_DATA);
          assertThat(e.getMessage()).as("seed=" + seed).contains("k");
        }
      }
    } finally {
      values.tensors().forEach(Tensor::close);
    }
  }

  @Test
  void shouldRejectLyingLengthsBeforeAllocating() {
    assertCorrupt(hex("c67fffffff01"), List.of(), "binary of length 2147483647", "v");
    assertCorrupt(hex("db7fffffff"), List.of(), "string of length 2147483647", "v");
    assertCorrupt(hex("c6ffffffff01"), List.of(), "not valid msgpack at offset=", "v");
    assertCorrupt(hex("dbffffffff"), List.of(), "not valid msgpack at offset=", "v");
    assertCorrupt(hex("dd7fffffff00"), List.of(), "array of size 2147483647", "v");
    assertCorrupt(hex("df7fffffff"), List.of(), "map of size 2147483647", "v");
    assertCorrupt(hex("dfffffffff"), List.of(), "not valid msgpack at offset=", "v");
    assertCorrupt(hex("c97fffffff03"), List.of(), "extension payload of length 2147483647", "v");
    assertCorrupt(hex("92c0"), List.of(), "", "v");
  }

  @Test
  void shouldRejectInvalidMsgpackAndUnknownTagsAsCorrupt() {
    assertCorrupt(hex("c1"), List.of(), "", "v");
    assertCorrupt(hex("d40900"), List.of(), "extension type=9", "v");
    assertCorrupt(hex("d40500"), List.of(), "extension type=5", "v");
    assertCorrupt(hex("a2c328"), List.of(), "UTF-8", "v");
    assertCorrupt(hex("c0c0"), List.of(), "trailing bytes", "v");
    assertCorrupt(hex("82a161c0a161c0"), List.of(), "duplicate map key a", "v");
    assertCorrupt(
        hex("c1feed"), List.of(MemorySegment.ofArray(new byte[3])), "unsupported encoding", "v");
  }

  @Test
  void shouldRejectBadTensorReferencesAsCorrupt() {
    MemorySegment eight = MemorySegment.ofArray(new byte[8]);
    assertCorrupt(tensorExt("\"float99\", [2], 1"), List.of(eight), "unknown dtype 'float99'", "v");
    assertCorrupt(tensorExt("\"float32\", [2], 2"), List.of(eight), "aux frame 2 of 1", "v");
    assertCorrupt(tensorExt("\"float32\", [2], 0"), List.of(eight), "aux frame 0 of 1", "v");
    assertCorrupt(tensorExt("\"float32\", [3], 1"), List.of(eight), "nbytes=12", "v");
    assertCorrupt(tensorExt("\"float32\", [-1], 1"), List.of(eight), "negative dimension -1", "v");
    assertCorrupt(tensorExt("\"float32\", [2], 1, 4, 8"), List.of(eight), "slice at 4 of 8", "v");
    assertCorrupt(tensorExt("\"int64\", [4611686018427387904, 4], 1"), List.of(eight), "", "v");
    assertCorrupt(tensorExt("\"float32\", [2]"), List.of(eight), "2 fields", "v");
    MemorySegment slice = MemorySegment.ofArray(new byte[16]);
    Object decoded =
        ValueDecoder.decode(
            MemorySegment.ofArray(tensorExtBytes("\"int32\", [2], 1, 8, 8")), List.of(slice), "v");
    assertThat(((Tensor) decoded).shape()).containsExactly(2);
  }

  @Test
  void AS128_shouldNotMixBuffersWhenEncodingConcurrently(BufferAllocator allocator)
      throws Exception {
    try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> futures = new ArrayList<>();
      for (int thread = 0; thread < 8; thread++) {
        int id = thread;
        futures.add(
            executor.submit(
                () -> {
                  for (int i = 0; i < 50; i++) {
                    try (Tensor a = Tensor.allocate(allocator, DType.INT64, 30 + i % 10);
                        Tensor b = Tensor.allocate(allocator, DType.INT8, 30 + i % 10 + i % 5)) {
                      a.segment().fill((byte) id);
                      b.segment().fill((byte) (id + 100));
                      Map<String, Object> value = Map.of("a", a, "b", List.of(b, "x" + id));
                      EncodedValue encoded = ValueEncoder.encode(value);
                      try (NativeBuffer packed = allocator.allocate(encoded.packedSize())) {
                        encoded.packInto(packed.segment());
                        Object back = PackedValueCodec.unpack(packed.segment(), "t" + id);
                        assertThat(RandomValues.deepEquals(value, back)).isTrue();
                      }
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> future : futures) {
        future.get();
      }
    }
  }

  private static Object roundTrip(Object value) {
    return ValueDecoder.decode(
        MemorySegment.ofArray(ValueEncoder.encode(value).mainFrame()), List.of(), "v");
  }

  private static void assertEncoded(Object value, String mainHex, String packedHex) {
    EncodedValue encoded = ValueEncoder.encode(value);
    assertThat(HEX.formatHex(encoded.mainFrame())).isEqualTo(mainHex);
    byte[] packed = new byte[(int) encoded.packedSize()];
    encoded.packInto(MemorySegment.ofArray(packed));
    assertThat(HEX.formatHex(packed)).isEqualTo(packedHex);
    assertThat(PackedValueCodec.unpack(MemorySegment.ofArray(packed), "v")).isEqualTo(value);
  }

  private static void assertCorrupt(
      MemorySegment main, List<MemorySegment> aux, String detail, String name) {
    assertThatThrownBy(() -> ValueDecoder.decode(main, aux, name))
        .as(detail)
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
        .hasMessageContaining("value " + name)
        .hasMessageContaining(detail.startsWith("length=") ? "" : detail);
  }

  private static MemorySegment hex(String hex) {
    return MemorySegment.ofArray(HEX.parseHex(hex));
  }

  private static MemorySegment tensorExt(String fields) {
    return MemorySegment.ofArray(tensorExtBytes(fields));
  }

  /**
   * Builds ext 3 whose payload is the msgpack array of the given comma-separated JSON-ish fields.
   */
  private static byte[] tensorExtBytes(String fields) {
    List<Object> payload = new ArrayList<>();
    for (String field : fields.split(", (?![^\\[]*\\])")) {
      if (field.startsWith("\"")) {
        payload.add(field.substring(1, field.length() - 1));
      } else if (field.startsWith("[")) {
        List<Object> dims = new ArrayList<>();
        for (String dim : field.substring(1, field.length() - 1).split(", ")) {
          dims.add(Long.parseLong(dim));
        }
        payload.add(dims);
      } else {
        payload.add(Long.parseLong(field));
      }
    }
    byte[] body = ValueEncoder.encode(payload).mainFrame();
    byte[] ext = new byte[3 + body.length];
    ext[0] = (byte) 0xC7;
    ext[1] = (byte) body.length;
    ext[2] = ValueDescriptor.EXT_TENSOR;
    System.arraycopy(body, 0, ext, 3, body.length);
    return ext;
  }
}
