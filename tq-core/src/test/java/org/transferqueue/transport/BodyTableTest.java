package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.codec.MsgpackWriter;

/** The metadata section codec and the transport's control messages, without sockets. */
class BodyTableTest {
  private static final TransportConfig CONFIG =
      TransportConfig.builder().maxBodySegments(16).maxBodySegmentBytes(1 << 20).build();

  @Test
  void shouldRoundTripBodyLengthsAndApplicationMetadata() {
    long seed = 0xB0D7L;
    Random random = new Random(seed);
    for (int round = 0; round < 200; round++) {
      int count = random.nextInt(17);
      List<MemorySegment> bodies = new ArrayList<>();
      long total = 0;
      for (int i = 0; i < count; i++) {
        byte[] bytes = new byte[random.nextInt(3) == 0 ? 0 : random.nextInt(5000)];
        bodies.add(MemorySegment.ofArray(bytes));
        total += bytes.length;
      }
      byte[] appMeta = new byte[random.nextInt(300)];
      random.nextBytes(appMeta);
      BodyTable table = BodyTable.decode(BodyTable.encode(bodies, appMeta), total, CONFIG);
      assertThat(table.bodyLengths())
          .as("seed=%d round=%d", seed, round)
          .containsExactly(bodies.stream().mapToLong(MemorySegment::byteSize).toArray());
      assertThat(table.applicationMetadata())
          .as("seed=%d round=%d", seed, round)
          .isEqualTo(appMeta);
    }
  }

  @Test
  void shouldWriteTheShortestMsgpackFormOfTheSpecForEveryLengthForm() {
    // The msgpack spec's forms: positive fixint, uint 8, uint 16, uint 32, uint 64 (big-endian).
    Object[][] lengths = {
      {0L, "00"},
      {1L, "01"},
      {127L, "7f"},
      {128L, "cc80"},
      {255L, "ccff"},
      {256L, "cd0100"},
      {65_535L, "cdffff"},
      {65_536L, "ce00010000"},
      {0xFFFF_FFFFL, "ceffffffff"},
      {0x1_0000_0000L, "cf0000000100000000"},
      {Long.MAX_VALUE, "cf7fffffffffffffff"},
    };
    for (Object[] row : lengths) {
      long length = (Long) row[0];
      byte[] expected = HexFormat.of().parseHex((String) row[1]);
      MsgpackWriter out = new MsgpackWriter(16);
      out.writeLong(length);
      assertThat(out.toByteArray()).as("length=%d", length).isEqualTo(expected);
      assertThat(BodyTable.uintSize(length)).as("length=%d", length).isEqualTo(expected.length);
    }
    // fixarray up to 15 entries, then array 16; each length 1000 is uint 16 cd 03e8.
    Object[][] counts = {{0, "90"}, {15, "9f"}, {16, "dc0010"}, {300, "dc012c"}};
    for (Object[] row : counts) {
      int count = (Integer) row[0];
      List<MemorySegment> bodies = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        bodies.add(MemorySegment.ofArray(new byte[1000]));
      }
      byte[] appMeta = {(byte) 0x91, 0x07};
      String expected = row[1] + "cd03e8".repeat(count) + "9107";
      assertThat(HexFormat.of().formatHex(BodyTable.encode(bodies, appMeta)))
          .as("count=%d", count)
          .isEqualTo(expected);
    }
  }

  @Test
  void shouldRejectTablesThatLieOrExceedTheLimits() {
    byte[] twoBodies =
        BodyTable.encode(
            List.of(MemorySegment.ofArray(new byte[10]), MemorySegment.ofArray(new byte[20])),
            new byte[0]);
    assertThatThrownBy(() -> BodyTable.decode(twoBodies, 31, CONFIG))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("add up to 30")
        .hasMessageContaining("body length=31");
    assertThatThrownBy(() -> BodyTable.decode(twoBodies, 5, CONFIG))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("body length=5");

    List<MemorySegment> many = new ArrayList<>();
    for (int i = 0; i < 17; i++) {
      many.add(MemorySegment.ofArray(new byte[0]));
    }
    assertThatThrownBy(() -> BodyTable.decode(BodyTable.encode(many, new byte[0]), 0, CONFIG))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("count=17 > maxBodySegments=16")
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.FRAME_TOO_LONG);

    byte[] big =
        BodyTable.encode(List.of(MemorySegment.ofArray(new byte[(1 << 20) + 1])), new byte[0]);
    assertThatThrownBy(() -> BodyTable.decode(big, (1 << 20) + 1, CONFIG))
        .hasMessageContaining("length=1048577");

    assertThatThrownBy(() -> BodyTable.decode(new byte[] {(byte) 0xC1, 1, 2}, 0, CONFIG))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("malformed body table");
  }

  @Test
  void shouldCarryErrorCodeAndMessageAndHelloToken() {
    byte[] section = ControlMessages.errorSection(ErrorCode.UNKNOWN_KEY, "key=k9 not found");
    BodyTable table = BodyTable.decode(section, 0, CONFIG);
    assertThat(table.bodyLengths()).isEmpty();
    TqException error = ControlMessages.decodeError(table.applicationMetadata(), "peer:1");
    assertThat(error.code()).isEqualTo(ErrorCode.UNKNOWN_KEY);
    assertThat(error.getMessage()).isEqualTo("remote error from peer:1: key=k9 not found");

    byte[] deadline = ControlMessages.errorSection(ErrorCode.DEADLINE_EXCEEDED, "slow");
    assertThat(
            ControlMessages.decodeError(
                BodyTable.decode(deadline, 0, CONFIG).applicationMetadata(), "p"))
        .isInstanceOf(DeadlineExceededException.class);

    String longMessage = "x".repeat(10_000);
    byte[] truncated = ControlMessages.errorSection(ErrorCode.INTERNAL, longMessage);
    assertThat(truncated.length).isLessThan(1000);

    byte[] hello = ControlMessages.helloSection("tok-1");
    assertThat(
            ControlMessages.decodeHelloToken(
                BodyTable.decode(hello, 0, CONFIG).applicationMetadata()))
        .isEqualTo("tok-1");
    byte[] anonymous = ControlMessages.helloSection(null);
    assertThat(
            ControlMessages.decodeHelloToken(
                BodyTable.decode(anonymous, 0, CONFIG).applicationMetadata()))
        .isNull();
    assertThat(ControlMessages.decodeHelloToken("garbage".getBytes(StandardCharsets.UTF_8)))
        .isNull();
  }
}
