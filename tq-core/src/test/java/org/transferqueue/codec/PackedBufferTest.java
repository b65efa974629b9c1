package org.transferqueue.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.testing.Seeds;

@ExtendWith(LeakCheckExtension.class)
class PackedBufferTest {
  private static final HexFormat HEX = HexFormat.of();

  @Test
  void shouldMatchSpecTableWhenPackingSingleFrames() {
    assertPacked("a26869", "010000000c00000003000000a26869", 15);
    assertPacked("a568656c6c6f", "010000000c00000006000000a568656c6c6f", 18);
    assertPacked("01", "010000000c0000000100000001", 13);
    assertPacked("c0", "010000000c00000001000000c0", 13);
    assertPacked("81a16101", "010000000c0000000400000081a16101", 16);
    assertPacked("cb400c000000000000", "010000000c00000009000000cb400c000000000000", 21);
  }

  @Test
  void shouldPlaceTwoFramesAtSpecOffsetsWhenMainFrameIs36Bytes() {
    byte[] packed =
        pack(List.of(MemorySegment.ofArray(new byte[36]), MemorySegment.ofArray(new byte[8])));
    assertThat(packed).hasSize(64);
    assertThat(HEX.formatHex(packed, 0, 20))
        .isEqualTo("02000000" + "14000000" + "24000000" + "38000000" + "08000000");
  }

  @Test
  void AS134_shouldRoundTripRawItemsWhenPacked() {
    List<MemorySegment> items = items("hello", "world!", "x");
    assertThat(PackedBufferWriter.packedSize(items)).isEqualTo(40);
    byte[] packed = pack(items);
    PackedBufferReader reader = new PackedBufferReader().wrap(MemorySegment.ofArray(packed), "k");
    assertThat(reader.itemCount()).isEqualTo(3);
    assertThat(strings(reader)).containsExactly("hello", "world!", "x");
    assertThat(reader.packedLength()).isEqualTo(40);
  }

  @Test
  void AS135_shouldWriteOnlyInsideTheSliceWhenTargetIsPartOfALargerBuffer(
      BufferAllocator allocator) {
    List<MemorySegment> items = items("hello", "world!", "x");
    long size = PackedBufferWriter.packedSize(items);
    try (NativeBuffer buffer = allocator.allocate(17 + size + 23)) {
      MemorySegment whole = buffer.segment();
      whole.fill((byte) 0);
      assertThat(PackedBufferWriter.packInto(whole.asSlice(17, size + 23), items)).isEqualTo(size);
      assertThat(whole.asSlice(0, 17).toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 0);
      assertThat(whole.asSlice(17 + size, 23).toArray(ValueLayout.JAVA_BYTE))
          .containsOnly((byte) 0);
      PackedBufferReader reader = new PackedBufferReader().wrap(whole.asSlice(17, size), "k");
      assertThat(strings(reader)).containsExactly("hello", "world!", "x");
    }
  }

  @Test
  void AS136_shouldPackZeroItemsIntoFourBytes() {
    byte[] packed = pack(List.of());
    assertThat(HEX.formatHex(packed)).isEqualTo("00000000");
    assertThat(new PackedBufferReader().wrap(MemorySegment.ofArray(packed), "k").items()).isEmpty();
  }

  @Test
  void AS137_shouldRejectTargetWhenTooSmall() {
    byte[] target = new byte[14];
    assertThatThrownBy(
            () -> PackedBufferWriter.packInto(MemorySegment.ofArray(target), items("abc")))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("target buffer has 14 bytes, requires 15");
    assertThat(target).containsOnly((byte) 0);
  }

  @Test
  void shouldRoundTripRandomItemsWhenSeeded() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int round = 0; round < 200; round++) {
      int count = random.nextInt(8);
      List<byte[]> expected = new ArrayList<>();
      List<MemorySegment> items = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        byte[] item = new byte[random.nextInt(300)];
        random.nextBytes(item);
        expected.add(item);
        items.add(MemorySegment.ofArray(item));
      }
      byte[] packed = new byte[(int) PackedBufferWriter.packedSize(items) + random.nextInt(5)];
      PackedBufferWriter.packInto(MemorySegment.ofArray(packed), items);
      PackedBufferReader reader = new PackedBufferReader().wrap(MemorySegment.ofArray(packed), "k");
      assertThat(reader.itemCount()).as("seed=" + seed).isEqualTo(count);
      for (int i = 0; i < count; i++) {
        assertThat(reader.item(i).toArray(ValueLayout.JAVA_BYTE))
            .as("seed=" + seed + " round=" + round + " item=" + i)
            .isEqualTo(expected.get(i));
      }
    }
  }

  @Test
  void shouldReportCorruptDataWhenEveryTruncationIsRead() {
    byte[] packed = pack(items("hello", "world!", "x"));
    for (int length = 0; length < packed.length; length++) {
      MemorySegment truncated = MemorySegment.ofArray(packed).asSlice(0, length);
      assertThatThrownBy(() -> new PackedBufferReader().wrap(truncated, "key 'k7'"))
          .as("length=" + length)
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
          .hasMessageContaining("key 'k7'");
    }
  }

  @Test
  void shouldReportCorruptDataWhenCountOffsetOrSizeLies() {
    assertCorrupt("ffffffff", "item count=4294967295");
    assertCorrupt("02000000" + "0c000000" + "01000000", "item count=2");
    // offset inside the table
    assertCorrupt("01000000" + "04000000" + "01000000" + "aa", "offset=4");
    // size runs past the end
    assertCorrupt("01000000" + "0c000000" + "02000000" + "aa", "size=2");
    // huge size whose end would overflow 32 bits
    assertCorrupt("01000000" + "0c000000" + "ffffffff" + "aa", "size=4294967295");
    // huge offset
    assertCorrupt("01000000" + "ffffffff" + "01000000" + "aa", "offset=4294967295");
  }

  @Test
  void shouldRejectItemsWhenTooLargeForFormat() {
    assertThatThrownBy(() -> PackedBufferDescriptor.packedSize(1L << 32))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("size=4294967296");
    assertThatThrownBy(() -> PackedBufferDescriptor.packedSize(0xFFFF_FFF0L, 100))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("item 1");
  }

  private static void assertCorrupt(String hex, String detail) {
    MemorySegment segment = MemorySegment.ofArray(HEX.parseHex(hex));
    assertThatThrownBy(() -> new PackedBufferReader().wrap(segment, "key 'bad'"))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
        .hasMessageContaining("key 'bad'")
        .hasMessageContaining(detail);
  }

  private static void assertPacked(String mainHex, String packedHex, int size) {
    byte[] packed = pack(List.of(MemorySegment.ofArray(HEX.parseHex(mainHex))));
    assertThat(HEX.formatHex(packed)).isEqualTo(packedHex);
    assertThat(packed).hasSize(size);
    PackedBufferReader reader = new PackedBufferReader().wrap(MemorySegment.ofArray(packed), "v");
    assertThat(HEX.formatHex(reader.item(0).toArray(ValueLayout.JAVA_BYTE))).isEqualTo(mainHex);
  }

  private static byte[] pack(List<MemorySegment> items) {
    byte[] packed = new byte[(int) PackedBufferWriter.packedSize(items)];
    assertThat(PackedBufferWriter.packInto(MemorySegment.ofArray(packed), items))
        .isEqualTo(packed.length);
    return packed;
  }

  private static List<MemorySegment> items(String... values) {
    List<MemorySegment> items = new ArrayList<>();
    for (String value : values) {
      items.add(MemorySegment.ofArray(value.getBytes(StandardCharsets.UTF_8)));
    }
    return items;
  }

  private static List<String> strings(PackedBufferReader reader) {
    List<String> strings = new ArrayList<>();
    for (MemorySegment item : reader.items()) {
      strings.add(new String(item.toArray(ValueLayout.JAVA_BYTE), StandardCharsets.UTF_8));
    }
    return strings;
  }
}
