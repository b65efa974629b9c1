package org.transferqueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.testing.Seeds;

/** The string rule: valid Unicode only, names non-empty, and messages that always encode. */
class StringsTest {
  private static final int ROUNDS = 2000;

  /** Chars that matter here: ASCII, Latin-1, U+FFFD, both surrogate halves, a BMP char. */
  private static final char[] ALPHABET = {
    'a', '"', '\\', '\n', 'é', '\uFFFD', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', '你', '\u0000'
  };

  private static String randomString(Random random) {
    char[] chars = new char[random.nextInt(12)];
    for (int i = 0; i < chars.length; i++) {
      chars[i] = ALPHABET[random.nextInt(ALPHABET.length)];
    }
    return new String(chars);
  }

  private static ErrorCode code(Throwable error) {
    return ((TqException) error).code();
  }

  @Test
  void shouldFindTheFirstLoneSurrogateWhenPairsAreValid() {
    assertThat(Strings.loneSurrogate("")).isEqualTo(-1);
    assertThat(Strings.loneSurrogate("plain ascii")).isEqualTo(-1);
    assertThat(Strings.loneSurrogate("emoji \uD83D\uDE00 and \uFFFD")).isEqualTo(-1);
    assertThat(Strings.loneSurrogate("\uD800")).isZero();
    assertThat(Strings.loneSurrogate("ab\uDC00")).isEqualTo(2);
    assertThat(Strings.loneSurrogate("\uD83D\uDE00\uD83D")).as("high at the end").isEqualTo(2);
    assertThat(Strings.loneSurrogate("\uDE00\uD83D")).as("pair in the wrong order").isZero();
    assertThat(Strings.loneSurrogate("x\uD800\uD800\uDC00")).as("high before a pair").isEqualTo(1);
  }

  @Test
  void shouldAgreeWithTheUtf8EncoderWhenStringsAreRandom() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int round = 0; round < ROUNDS; round++) {
      String value = randomString(random);
      int at = Strings.loneSurrogate(value);
      boolean encodable = StandardCharsets.UTF_8.newEncoder().canEncode(value);
      assertThat(at < 0).as("seed=%d value=%s", seed, Strings.quote(value)).isEqualTo(encodable);
      if (at >= 0) {
        assertThat(Character.isSurrogate(value.charAt(at))).as("seed=%d", seed).isTrue();
        assertThat(StandardCharsets.UTF_8.newEncoder().canEncode(value.substring(0, at)))
            .as("seed=%d: no lone surrogate before index %d of %s", seed, at, Strings.quote(value))
            .isTrue();
        assertThatThrownBy(() -> Strings.checkWellFormed(value, "tag value"))
            .as("seed=%d", seed)
            .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
            .hasMessageStartingWith("tag value ")
            .hasMessageContaining("at index " + at);
      } else {
        assertThat(Strings.checkWellFormed(value, "tag value")).isSameAs(value);
      }
      String quoted = Strings.quote(value);
      assertThat(StandardCharsets.UTF_8.newEncoder().canEncode(quoted))
          .as("seed=%d: quote(%s) encodes", seed, quoted)
          .isTrue();
      assertThat(Strings.loneSurrogate(Strings.escapeLoneSurrogates(value))).isEqualTo(-1);
    }
  }

  @Test
  void shouldDecodeUtf8StrictlyWhenBytesAreRandom() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    byte[][] pieces = {
      {'a'},
      HexFormat.of().parseHex("c3a9"),
      HexFormat.of().parseHex("efbfbd"), // é, U+FFFD
      HexFormat.of().parseHex("f09f9880"), // U+1F600
      HexFormat.of().parseHex("eda080"), // an encoded surrogate
      HexFormat.of().parseHex("c080"), // overlong NUL
      {(byte) 0x80},
      {(byte) 0xff},
      HexFormat.of().parseHex("e282"), // truncated
    };
    for (int round = 0; round < ROUNDS; round++) {
      List<Byte> bytes = new ArrayList<>();
      for (int i = random.nextInt(6); i > 0; i--) {
        for (byte b : pieces[random.nextInt(pieces.length)]) {
          bytes.add(b);
        }
      }
      byte[] input = new byte[bytes.size() + 2];
      for (int i = 0; i < bytes.size(); i++) {
        input[i + 1] = bytes.get(i);
      }
      String strict = strictDecode(input, 1, bytes.size());
      assertThat(Strings.decodeUtf8(input, 1, bytes.size()))
          .as("seed=%d bytes=%s", seed, HexFormat.of().formatHex(input))
          .isEqualTo(strict);
    }
  }

  private static String strictDecode(byte[] bytes, int offset, int length) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes, offset, length))
          .toString();
    } catch (CharacterCodingException e) {
      return null;
    }
  }

  @Test
  void shouldShowTheOffendingStringEscapedWithTheIndexOfItsLoneSurrogate() {
    assertThatThrownBy(() -> Strings.checkWellFormed("p\uD800x", "partition_id"))
        .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessage(
            "partition_id \"p\\uD800x\" is not valid Unicode: lone surrogate \\uD800 at index 1,"
                + " which UTF-8 cannot encode");
    assertThat(Strings.checkWellFormed(null, "tag value")).isNull();
  }

  @Test
  void shouldRefuseNullEmptyAndLoneSurrogateNames() {
    assertThatThrownBy(() -> Strings.checkName(null, "key")).hasMessage("key is null");
    assertThatThrownBy(() -> Strings.checkName("", "key")).hasMessage("key is empty");
    assertThatThrownBy(() -> Strings.checkName("\uDFFF", "key"))
        .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("\\uDFFF at index 0");
    assertThat(Strings.checkName("k", "key")).isEqualTo("k");
  }

  @Test
  void shouldNameThePositionOfTheBadNameWhenAListIsChecked() {
    assertThatThrownBy(() -> Strings.checkNames(List.of("", "b"), "key"))
        .satisfies(e -> assertThat(code(e)).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessage("keys [\"\", \"b\"]: key at position 0 is empty");
    assertThatThrownBy(() -> Strings.checkNames(Arrays.asList("a", null), "key"))
        .hasMessage("keys [\"a\", null]: key at position 1 is null");
    assertThatThrownBy(() -> Strings.checkNames(List.of("a", 7), "field name"))
        .hasMessage(
            "field names [\"a\", 7]: field name at position 1 is a java.lang.Integer, not a string");
    assertThatThrownBy(() -> Strings.checkNames(List.of("a", "b", "c\uD800"), "key"))
        .hasMessage(
            "keys [\"a\", \"b\", \"c\\uD800\"]: key at position 2 \"c\\uD800\" is not valid"
                + " Unicode: lone surrogate \\uD800 at index 1, which UTF-8 cannot encode");
    Strings.checkNames(List.of("a", "\uD83D\uDE00"), "key");
  }

  @Test
  void shouldQuoteSoThatEveryMessageCanBeEncoded() {
    assertThat(Strings.quote("")).isEqualTo("\"\"");
    assertThat(Strings.quote((String) null)).isEqualTo("null");
    assertThat(Strings.quote("a\"b\\c\nd\u0001")).isEqualTo("\"a\\\"b\\\\c\\nd\\u0001\"");
    assertThat(Strings.quote("\uD83D\uDE00\uDC00")).isEqualTo("\"\uD83D\uDE00\\uDC00\"");
    String longPair = "a".repeat(Strings.MAX_QUOTED_CHARS - 1) + "\uD83D\uDE00";
    assertThat(Strings.quote(longPair))
        .as("the cut does not split a pair")
        .isEqualTo("\"" + "a".repeat(Strings.MAX_QUOTED_CHARS - 1) + "\"... (121 chars)");
    assertThat(Strings.quote(Arrays.asList("", null, 3))).isEqualTo("[\"\", null, 3]");
    List<String> many = Collections.nCopies(Strings.MAX_QUOTED_ELEMENTS + 5, "k");
    assertThat(Strings.quote(many)).endsWith("\"k\", ... (15 in all)]");
    assertThat(Strings.escapeLoneSurrogates("ok")).isSameAs("ok");
    assertThat(Strings.escapeLoneSurrogates("x\uD800\uD83D\uDE00"))
        .isEqualTo("x\\uD800\uD83D\uDE00");
  }
}
