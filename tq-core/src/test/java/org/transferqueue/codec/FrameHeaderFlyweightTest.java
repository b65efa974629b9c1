package org.transferqueue.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.testing.Seeds;

@ExtendWith(LeakCheckExtension.class)
class FrameHeaderFlyweightTest {
  private static final long MAX = 1L << 20;

  @Test
  void shouldWriteLittleEndianHeaderBytesWhenEncoding() {
    byte[] bytes = new byte[64];
    new FrameHeaderFlyweight()
        .wrap(MemorySegment.ofArray(bytes))
        .writeHeader(0x0102, 0x03, 0x1122334455667788L, 5, 0x99);
    assertThat(HexFormat.of().formatHex(bytes, 0, 32))
        .isEqualTo("5451465201000201030000000500000088776655443322119900000000000000");
  }

  @Test
  void shouldRoundTripFrameWhenEncodedIntoNativeBuffer(BufferAllocator allocator) {
    byte[] metadata = "{\"k\":1}".getBytes(StandardCharsets.UTF_8);
    long bodyLength = 100;
    long frameLength = FrameDescriptor.frameLength(metadata.length, bodyLength);
    assertThat(frameLength).isEqualTo(64 + 100);
    try (NativeBuffer buffer = allocator.allocate(frameLength)) {
      MemorySegment frame = buffer.segment();
      frame.fill((byte) 0x7F);
      FrameHeaderFlyweight writer = new FrameHeaderFlyweight().wrap(frame);
      writer
          .writeHeader(7, FrameDescriptor.FLAG_RESPONSE, 42, metadata.length, bodyLength)
          .putMetadata(MemorySegment.ofArray(metadata));
      writer.body().fill((byte) 9);

      FrameHeaderFlyweight reader = new FrameHeaderFlyweight().wrap(frame);
      assertThat(reader.validate(MAX)).isEqualTo(frameLength);
      assertThat(reader.version()).isEqualTo(FrameDescriptor.CURRENT_VERSION);
      assertThat(reader.type()).isEqualTo(7);
      assertThat(reader.flags()).isEqualTo(FrameDescriptor.FLAG_RESPONSE);
      assertThat(reader.correlationId()).isEqualTo(42);
      assertThat(reader.metadata().toArray(ValueLayout.JAVA_BYTE)).isEqualTo(metadata);
      assertThat(reader.bodyOffset() % FrameDescriptor.BODY_ALIGNMENT).isZero();
      MemorySegment padding =
          frame.asSlice(32 + metadata.length, reader.bodyOffset() - 32 - metadata.length);
      assertThat(padding.toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 0);
      assertThat(reader.body().byteSize()).isEqualTo(bodyLength);
      assertThat(reader.body().toArray(ValueLayout.JAVA_BYTE)).containsOnly((byte) 9);
    }
  }

  @Test
  void shouldRoundTripRandomHeadersWhenSeeded() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    FrameHeaderFlyweight header = new FrameHeaderFlyweight();
    for (int i = 0; i < 1000; i++) {
      int type = random.nextInt(0x10000);
      int flags = random.nextInt();
      long id = random.nextLong();
      long metadataLength = random.nextInt(1 << 16);
      long bodyLength = random.nextLong(1L << 40);
      MemorySegment segment = MemorySegment.ofArray(new byte[32]);
      header.wrap(segment).writeHeader(type, flags, id, metadataLength, bodyLength);
      header.wrap(segment.asReadOnly());
      String context = "seed=" + seed + " iteration=" + i;
      assertThat(header.type()).as(context).isEqualTo(type);
      assertThat(header.flags()).as(context).isEqualTo(flags);
      assertThat(header.correlationId()).as(context).isEqualTo(id);
      assertThat(header.metadataLength()).as(context).isEqualTo(metadataLength);
      assertThat(header.bodyLength()).as(context).isEqualTo(bodyLength);
      assertThat(header.validate(Long.MAX_VALUE))
          .as(context)
          .isEqualTo(FrameDescriptor.align(32 + metadataLength) + bodyLength);
    }
  }

  @Test
  void shouldReadHeaderWhenWrappedInByteBuffer() {
    ByteBuffer buffer = ByteBuffer.allocate(40).order(ByteOrder.BIG_ENDIAN);
    buffer.position(8);
    new FrameHeaderFlyweight().wrap(buffer).writeHeader(3, 0, -1L, 0, 0);
    FrameHeaderFlyweight header = new FrameHeaderFlyweight().wrap(buffer);
    assertThat(header.correlationId()).isEqualTo(-1L);
    assertThat(buffer.order(ByteOrder.LITTLE_ENDIAN).getInt(8)).isEqualTo(FrameDescriptor.MAGIC);
    assertThat(header.validate(MAX)).isEqualTo(64);
  }

  @Test
  void shouldRejectFrameTooLongWhenBodyExceedsMaximum() {
    FrameHeaderFlyweight header = header(10, MAX);
    assertThatThrownBy(() -> header.validate(MAX))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FRAME_TOO_LONG))
        .hasMessageContaining("metadata length=10")
        .hasMessageContaining("body length=" + MAX)
        .hasMessageContaining("max frame length=" + MAX);
  }

  @Test
  void shouldRejectFrameTooLongWhenLengthsAreHugeOrNegative() {
    MemorySegment segment = MemorySegment.ofArray(new byte[32]);
    FrameHeaderFlyweight header = new FrameHeaderFlyweight().wrap(segment);
    header.writeHeader(1, 0, 1, 0, 0);
    segment.set(FrameDescriptor.U64, FrameDescriptor.BODY_LENGTH_OFFSET, -1L);
    assertThatThrownBy(() -> header.validate(Long.MAX_VALUE))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FRAME_TOO_LONG))
        .hasMessageContaining("body length=18446744073709551615");
    segment.set(FrameDescriptor.U64, FrameDescriptor.BODY_LENGTH_OFFSET, 0L);
    segment.set(FrameDescriptor.U32, FrameDescriptor.METADATA_LENGTH_OFFSET, -1);
    assertThatThrownBy(() -> header.validate(MAX))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FRAME_TOO_LONG))
        .hasMessageContaining("metadata length=4294967295");
    assertThat(header.metadataLength()).isEqualTo(4294967295L);
    segment.set(FrameDescriptor.U64, FrameDescriptor.BODY_LENGTH_OFFSET, Long.MAX_VALUE);
    assertThatThrownBy(() -> header.validate(Long.MAX_VALUE))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.FRAME_TOO_LONG));
  }

  @Test
  void shouldAcceptFrameWhenExactlyAtMaximum() {
    assertThat(header(0, MAX - 64).validate(MAX)).isEqualTo(MAX);
  }

  @Test
  void shouldRejectWrongMagicWithProtocolError() {
    MemorySegment segment = MemorySegment.ofArray(new byte[32]);
    new FrameHeaderFlyweight().wrap(segment).writeHeader(1, 0, 1, 0, 0);
    segment.set(FrameDescriptor.U32, 0, 0x50545448); // "HTTP"
    assertThatThrownBy(() -> new FrameHeaderFlyweight().wrap(segment).validate(MAX))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR))
        .hasMessageContaining("magic=0x50545448");
  }

  @Test
  void shouldRejectUnknownVersionWithUnsupportedVersion() {
    MemorySegment segment = MemorySegment.ofArray(new byte[32]);
    new FrameHeaderFlyweight().wrap(segment).writeHeader(1, 0, 1, 0, 0);
    segment.set(FrameDescriptor.U16, FrameDescriptor.VERSION_OFFSET, (short) 2);
    assertThatThrownBy(() -> new FrameHeaderFlyweight().wrap(segment).validate(MAX))
        .isInstanceOfSatisfying(
            ProtocolException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.UNSUPPORTED_VERSION))
        .hasMessageContaining("version=2");
  }

  @Test
  void shouldRejectShortSegmentAndShortBodyWhenSlicing() {
    assertThatThrownBy(() -> new FrameHeaderFlyweight().wrap(MemorySegment.ofArray(new byte[31])))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("31 bytes");
    FrameHeaderFlyweight header = header(4, 1000);
    assertThatThrownBy(header::metadata)
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR));
    assertThatThrownBy(header::body)
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR))
        .hasMessageContaining("length=1000");
  }

  @Test
  void shouldRejectOutOfRangeFieldsWhenWriting() {
    FrameHeaderFlyweight header =
        new FrameHeaderFlyweight().wrap(MemorySegment.ofArray(new byte[32]));
    assertThatThrownBy(() -> header.type(0x10000)).isInstanceOf(TqException.class);
    assertThatThrownBy(() -> header.bodyLength(-1)).isInstanceOf(TqException.class);
    assertThatThrownBy(() -> header.metadataLength(1L << 32)).isInstanceOf(TqException.class);
  }

  private static FrameHeaderFlyweight header(long metadataLength, long bodyLength) {
    MemorySegment segment = MemorySegment.ofArray(new byte[32]);
    return new FrameHeaderFlyweight()
        .wrap(segment)
        .writeHeader(1, 0, 1, metadataLength, bodyLength);
  }
}
