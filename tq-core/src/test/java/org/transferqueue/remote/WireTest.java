package org.transferqueue.remote;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;

/** The msgpack helpers of the remote messages, without sockets. */
class WireTest {
  @Test
  void shouldRoundTripEveryKindOfValueAcrossSeveralBufferChunks() {
    long seed = 0x317EL;
    Random random = new Random(seed);
    String big = "ü".repeat(3000) + "end";
    byte[] blob = new byte[5000];
    random.nextBytes(blob);
    long[] longs = random.longs(500).toArray();
    byte[] bytes =
        new Wire.Writer()
            .array(7)
            .bool(true)
            .i64(-5)
            .str("")
            .str(big)
            .bin(blob)
            .longs(longs)
            .strings(List.of("a", "€", "key_1"))
            .toBytes();
    try (Wire.Reader r = new Wire.Reader(bytes, "test message")) {
      assertThat(r.array(7)).isEqualTo(7);
      assertThat(r.bool()).isTrue();
      assertThat(r.i64()).isEqualTo(-5);
      assertThat(r.str()).isEmpty();
      assertThat(r.str()).as("seed=%d", seed).isEqualTo(big);
      assertThat(r.bin()).isEqualTo(blob);
      assertThat(r.longs(1000)).isEqualTo(longs);
      assertThat(r.strings(10)).containsExactly("a", "€", "key_1");
    }
  }

  @Test
  void shouldRejectLengthsLongerThanTheMessageBeforeAllocating() {
    // str32 header claiming 2^31-1 bytes, then nothing
    byte[] lyingString = {(byte) 0xdb, 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff};
    // bin32 header claiming 1000 bytes, then 2
    byte[] lyingBin = {(byte) 0xc6, 0, 0, 0x03, (byte) 0xe8, 1, 2};
    try (Wire.Reader r = new Wire.Reader(lyingString, "test message")) {
      assertThatThrownBy(r::str)
          .isInstanceOfSatisfying(
              ProtocolException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR))
          .hasMessageContaining("malformed test message")
          .hasMessageContaining("2147483647");
    }
    try (Wire.Reader r = new Wire.Reader(lyingBin, "test message")) {
      assertThatThrownBy(r::bin)
          .isInstanceOf(ProtocolException.class)
          .hasMessageContaining("1000 > 2 bytes left");
    }
  }

  @Test
  void shouldRejectMalformedUtf8WhenReadingAStringOrAKey() {
    String[] malformed = {"c328", "eda080", "c080", "edb080", "f4908080"};
    for (String hex : malformed) {
      byte[] utf8 = HexFormat.of().parseHex(hex);
      byte[] str = new byte[utf8.length + 1];
      str[0] = (byte) (0xa0 | utf8.length); // fixstr
      System.arraycopy(utf8, 0, str, 1, utf8.length);
      byte[] keys = new byte[str.length + 1];
      keys[0] = (byte) 0x91; // an array of one key
      System.arraycopy(str, 0, keys, 1, str.length);
      try (Wire.Reader r = new Wire.Reader(str, "test message")) {
        assertThatThrownBy(r::str)
            .as(hex)
            .isInstanceOfSatisfying(
                ProtocolException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR))
            .hasMessageContaining("malformed test message")
            .hasMessageContaining("not valid UTF-8");
      }
      try (Wire.Reader r = new Wire.Reader(keys, "test message")) {
        assertThatThrownBy(() -> r.strings(10)).as(hex).isInstanceOf(ProtocolException.class);
      }
    }
    byte[] realReplacement = new Wire.Writer().strings(List.of("\uFFFD", "a\uFFFDb")).toBytes();
    try (Wire.Reader r = new Wire.Reader(realReplacement, "test message")) {
      assertThat(r.strings(10)).containsExactly("\uFFFD", "a\uFFFDb");
    }
  }

  @Test
  void shouldRefuseALoneSurrogateWhenWritingAStringOrAKey() {
    for (String bad : List.of("\uD800", "k\uDC00", "\uD83D\uDE00\uD83D")) {
      assertThatThrownBy(() -> new Wire.Writer().str(bad))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
          .hasMessageStartingWith("string \"")
          .hasMessageContaining("is not valid Unicode");
      assertThatThrownBy(() -> new Wire.Writer().strings(List.of("ok", bad)))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("lone surrogate");
    }
    byte[] pair = new Wire.Writer().str("\uD83D\uDE00").toBytes();
    try (Wire.Reader r = new Wire.Reader(pair, "test message")) {
      assertThat(r.str()).isEqualTo("\uD83D\uDE00");
    }
  }

  @Test
  void shouldRoundTripKeysAsStringsWhenShortLongOrNotAscii() {
    List<String> keys =
        List.of(
            "", "12@f", "a".repeat(31), "b".repeat(32), "c".repeat(300), "€@x", "k".repeat(256));
    byte[] asKeys = new Wire.Writer().strings(keys).toBytes();
    try (Wire.Reader r = new Wire.Reader(asKeys, "test message")) {
      assertThat(r.strings(10)).isEqualTo(keys);
    }
  }

  @Test
  void shouldRejectAKeyLongerThanTheMessageAsStringsDoes() {
    byte[] truncated = {(byte) 0x91, (byte) 0xd9, 10, 'a', 'b'}; // str8 of 10 bytes, 2 present
    try (Wire.Reader r = new Wire.Reader(truncated, "test message")) {
      assertThatThrownBy(() -> r.strings(10))
          .isInstanceOf(ProtocolException.class)
          .hasMessageContaining("10 > 2 bytes left");
    }
    byte[] notAString = {(byte) 0x91, 0x05};
    try (Wire.Reader r = new Wire.Reader(notAString, "test message")) {
      assertThatThrownBy(() -> r.strings(10)).isInstanceOf(ProtocolException.class);
    }
  }
}
