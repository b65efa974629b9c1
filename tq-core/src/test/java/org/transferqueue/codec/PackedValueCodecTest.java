package org.transferqueue.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

@ExtendWith(LeakCheckExtension.class)
class PackedValueCodecTest {

  /** One buffer per size from {@code allocator}, each added to {@code owned}. */
  private static List<MemorySegment> allocate(
      BufferAllocator allocator, long[] sizes, List<NativeBuffer> owned) {
    List<MemorySegment> targets = new ArrayList<>();
    for (long size : sizes) {
      NativeBuffer buffer = allocator.allocate(size);
      owned.add(buffer);
      targets.add(buffer.segment());
    }
    return targets;
  }

  @Test
  void shouldDecodeEveryStringOfABatchExactlyWhenTheyShareOneScratch(BufferAllocator allocator) {
    // Long, short, longer, then empty, non-ASCII and one over the kept scratch size: a string
    // must never see bytes a longer one left in the shared scratch.
    List<Object> values =
        List.of(
            "x".repeat(40_000),
            "short",
            List.of("y".repeat(50_000), "z"),
            "",
            "h\u00e9llo \u4e16\u754c \uD83D\uDE00",
            "w".repeat(ByteScratch.MAX_KEPT_BYTES + 3),
            "after");
    List<NativeBuffer> owned = new ArrayList<>();
    try {
      List<MemorySegment> packed =
          PackedValueCodec.batchEncodeInto(values, sizes -> allocate(allocator, sizes, owned));
      List<String> names = new ArrayList<>();
      for (int i = 0; i < values.size(); i++) {
        names.add("v" + i);
      }
      assertThat(PackedValueCodec.batchDecodeFrom(packed, names)).containsExactlyElementsOf(values);
    } finally {
      owned.forEach(NativeBuffer::close);
    }
  }

  @Test
  void shouldReuseTheScratchUpToItsLimit() {
    ByteScratch scratch = new ByteScratch();
    byte[] first = scratch.atLeast(100);
    assertThat(first.length).isGreaterThanOrEqualTo(100);
    assertThat(scratch.atLeast(10)).isSameAs(first);
    byte[] grown = scratch.atLeast(first.length + 1);
    assertThat(grown.length).isGreaterThan(first.length);
    assertThat(scratch.atLeast(5)).isSameAs(grown);
    byte[] huge = scratch.atLeast(ByteScratch.MAX_KEPT_BYTES + 1);
    assertThat(huge).hasSize(ByteScratch.MAX_KEPT_BYTES + 1);
    // The huge array is not kept.
    assertThat(scratch.atLeast(5)).isSameAs(grown);
  }

  @Test
  void AS138_shouldAllocateEachBufferAtItsPackedSize(BufferAllocator allocator) {
    try (Tensor arange = arange(allocator, 8)) {
      List<Object> values = List.of(Map.of("x", 1L), "a string", arange);
      List<NativeBuffer> owned = new ArrayList<>();
      try {
        List<long[]> calls = new ArrayList<>();
        List<MemorySegment> packed =
            PackedValueCodec.batchEncodeInto(
                values,
                sizes -> {
                  calls.add(sizes);
                  return allocate(allocator, sizes, owned);
                });
        assertThat(calls).hasSize(1);
        assertThat(packed).hasSize(3);
        for (int i = 0; i < 3; i++) {
          assertThat(packed.get(i).byteSize()).isEqualTo(calls.get(0)[i]);
          assertThat(owned.get(i).lengthBytes()).isEqualTo(calls.get(0)[i]);
        }
        assertThat(calls.get(0)[2])
            .isEqualTo(4 + 16 + 15 + 32); // main frame: ext8 header + 12-byte reference
        List<Object> back = PackedValueCodec.batchDecodeFrom(packed, List.of("a", "b", "c"));
        assertThat(RandomValues.deepEquals(values, back)).isTrue();
      } finally {
        owned.forEach(NativeBuffer::close);
      }
    }
  }

  @Test
  void AS139_shouldReportPackedSizesWhenBuffersArePadded(BufferAllocator allocator) {
    try (Tensor arange = arange(allocator, 4);
        NativeBuffer region = allocator.allocate(4096)) {
      List<Object> values = List.of(bytes("alpha"), Map.of("k", "v"), arange);
      long[] requested = new long[3];
      List<MemorySegment> packed =
          PackedValueCodec.batchEncodeInto(
              values,
              sizes -> {
                System.arraycopy(sizes, 0, requested, 0, 3);
                List<MemorySegment> targets = new ArrayList<>();
                long offset = 0;
                for (long size : sizes) { // one shared region, each slot 32 bytes larger
                  targets.add(region.segment().asSlice(offset, size + 32));
                  offset += size + 32;
                }
                return targets;
              });
      for (int i = 0; i < 3; i++) {
        assertThat(packed.get(i).byteSize()).isEqualTo(requested[i]);
      }
      List<Object> back = PackedValueCodec.batchDecodeFrom(packed, List.of("a", "b", "c"));
      assertThat(RandomValues.deepEquals(values, back)).isTrue();
    }
  }

  @Test
  void AS141_shouldCallAllocatorOnceWhenBatchIsEmpty() {
    AtomicInteger calls = new AtomicInteger();
    List<MemorySegment> packed =
        PackedValueCodec.batchEncodeInto(
            List.of(),
            sizes -> {
              calls.incrementAndGet();
              assertThat(sizes).isEmpty();
              return List.of();
            });
    assertThat(packed).isEmpty();
    assertThat(calls).hasValue(1);
    assertThat(PackedValueCodec.batchDecodeFrom(List.of(), List.of())).isEmpty();
  }

  @Test
  void shouldRejectAllocatorResultWhenCountOrSizeIsWrong() {
    assertThatThrownBy(() -> PackedValueCodec.batchEncodeInto(List.of("a"), sizes -> List.of()))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("0 buffers for 1 values");
    assertThatThrownBy(
            () ->
                PackedValueCodec.batchEncodeInto(
                    List.of("abc"), sizes -> List.of(MemorySegment.ofArray(new byte[4]))))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("target buffer has 4 bytes, requires 16");
  }

  @Test
  void shouldRejectPackedBufferWithoutFramesOrWithBadMainFrame() {
    assertThatThrownBy(
            () -> PackedValueCodec.unpack(MemorySegment.ofArray(new byte[4]), "key 'empty'"))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
        .hasMessageContaining("key 'empty'");
    byte[] packed = new byte[13];
    PackedBufferWriter.packInto(
        MemorySegment.ofArray(packed), List.of(MemorySegment.ofArray(new byte[] {(byte) 0xC1})));
    assertThatThrownBy(() -> PackedValueCodec.unpack(MemorySegment.ofArray(packed), "key 'c1'"))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
        .hasMessageContaining("key 'c1'");
  }

  @Test
  void AS140_shouldRoundTripMixedSetsWithCopiesIndependentOfBuffers(BufferAllocator allocator) {
    try (Tensor a = arange(allocator, 100);
        Tensor b = arange(allocator, 5)) {
      List<Object> values =
          List.of(
              42L,
              3.14,
              "hello",
              bytes("bytes"),
              Map.of("a", 1L, "b", List.of(1L, 2L, 3L)),
              Map.of("nested", Map.of("k", "v")),
              a,
              Map.of("meta", "v1", "arr", b),
              List.of(1L, 2L, "three"));
      for (Object value : values) {
        EncodedValue encoded = ValueEncoder.encode(value);
        try (NativeBuffer buffer = allocator.allocate(encoded.packedSize())) {
          encoded.packInto(buffer.segment());
          Object copy = PackedValueCodec.unpackCopying(buffer.segment(), "v", allocator);
          try {
            buffer.segment().fill((byte) 0);
            assertThat(RandomValues.deepEquals(value, copy)).as(String.valueOf(value)).isTrue();
          } finally {
            ValueDecoder.closeTensors(copy);
          }
        }
      }
    }
  }

  private static Tensor arange(BufferAllocator allocator, int n) {
    Tensor tensor = Tensor.allocate(allocator, DType.FLOAT32, n);
    for (int i = 0; i < n; i++) {
      tensor.setFloat(i, i);
    }
    return tensor;
  }

  private static byte[] bytes(String s) {
    return Arrays.copyOf(s.getBytes(java.nio.charset.StandardCharsets.US_ASCII), s.length());
  }
}
