package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.JsonWriter;
import org.transferqueue.TqException;
import org.transferqueue.testing.Seeds;

class JsonTest {

  @Test
  void shouldParseEveryKindOfValue() {
    Object value =
        Json.parse(
            " {\"s\":\"a\\\"b\\\\\\n\\u00e9\",\"i\":-12,\"big\":18446744073709551615,"
                + "\"d\":2.5e1,\"t\":true,\"f\":false,\"n\":null,\"l\":[1,[],{}]} ");
    Map<String, Object> expected = new LinkedHashMap<>();
    expected.put("s", "a\"b\\\n\u00e9");
    expected.put("i", -12L);
    expected.put("big", new BigInteger("18446744073709551615"));
    expected.put("d", 25.0);
    expected.put("t", true);
    expected.put("f", false);
    expected.put("n", null);
    expected.put("l", List.of(1L, List.of(), Map.of()));
    assertThat(value).isEqualTo(expected);
    assertThat(List.copyOf(((Map<?, ?>) value).keySet())).isEqualTo(List.copyOf(expected.keySet()));
    assertThat(Json.parse(String.valueOf(Long.MIN_VALUE))).isEqualTo(Long.MIN_VALUE);
  }

  @Test
  void shouldRejectWhatTheGrammarDoesNotAllowNamingTheTextAndPosition() {
    Map<String, String> cases = new LinkedHashMap<>();
    cases.put("", "position 0: a value is missing");
    cases.put("[1,]", "position 3: unexpected character ']'");
    cases.put("{\"a\":1,\"a\":2}", "position 7: duplicate key \"a\"");
    cases.put("01", "position 1: unexpected text after the value");
    cases.put("1.", "position 2: a digit must follow '.'");
    cases.put("'x'", "position 0: unexpected character '''");
    cases.put("{a:1}", "position 1: an object key must be a string");
    cases.put("\"abc", "unterminated string");
    cases.put("\"\\x\"", "bad escape '\\x'");
    cases.put("tru", "position 0: unexpected character 't'");
    cases.put("NaN", "position 0: unexpected character 'N'");
    cases.put("1e999", "out of the range of a 64-bit float");
    cases.put("[1] [2]", "position 4: unexpected text after the value");
    cases.forEach(
        (text, message) ->
            assertThatThrownBy(() -> Json.parse(text))
                .as(text)
                .isInstanceOfSatisfying(
                    TqException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
                .hasMessageContaining("invalid JSON '" + text + "'")
                .hasMessageContaining(message));
  }

  @Test
  void shouldRoundTripWrittenValues() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int i = 0; i < 200; i++) {
      Object value = randomValue(random, 0);
      assertThat(Json.parse(JsonWriter.COMPACT.write(value)))
          .as("seed %d: %s", seed, value)
          .isEqualTo(value);
    }
  }

  @Test
  void shouldWriteBytesAndNonFiniteFloatsAsStrings() {
    assertThat(
            JsonWriter.COMPACT.write(
                List.of(new byte[] {1, 2, 3}, Double.NaN, Float.POSITIVE_INFINITY)))
        .isEqualTo("[\"base64:AQID\",\"NaN\",\"Infinity\"]");
  }

  private static Object randomValue(Random random, int depth) {
    int kind = random.nextInt(depth > 3 ? 5 : 7);
    return switch (kind) {
      case 0 -> null;
      case 1 -> random.nextBoolean();
      case 2 -> random.nextLong();
      case 3 -> random.nextDouble() * 1e6 - 5e5;
      case 4 -> randomString(random);
      case 5 -> {
        int n = random.nextInt(4);
        List<Object> list = new java.util.ArrayList<>();
        for (int j = 0; j < n; j++) {
          list.add(randomValue(random, depth + 1));
        }
        yield list;
      }
      default -> {
        int n = random.nextInt(4);
        Map<String, Object> map = new LinkedHashMap<>();
        for (int j = 0; j < n; j++) {
          map.put(randomString(random) + j, randomValue(random, depth + 1));
        }
        yield map;
      }
    };
  }

  private static String randomString(Random random) {
    StringBuilder s = new StringBuilder();
    int n = random.nextInt(6);
    for (int i = 0; i < n; i++) {
      s.append(
          (char) (random.nextBoolean() ? random.nextInt(0x20, 0x7f) : random.nextInt(0, 0x300)));
    }
    return s.toString();
  }
}
