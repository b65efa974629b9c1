package org.transferqueue.cli;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * A small strict JSON (RFC 8259) reader for command-line values; {@link
 * org.transferqueue.JsonWriter#COMPACT} writes them.
 *
 * <p>Reading yields {@code null}, {@link Boolean}, {@link Long} (integers that fit), {@link
 * BigInteger} (larger integers), {@link Double} (numbers with a fraction or exponent), {@link
 * String}, unmodifiable {@link List} and insertion-ordered unmodifiable {@link Map}. Duplicate
 * object keys, trailing text and anything not in the grammar are rejected with {@code
 * INVALID_ARGUMENT} naming the text and the position. Stateless; thread-safe.
 */
final class Json {
  private static final int MAX_DEPTH = 64;

  private final String text;
  private int pos;

  private Json(String text) {
    this.text = text;
  }

  /**
   * Parses one JSON value.
   *
   * @param text the whole text, which must hold exactly one value (whitespace around is allowed)
   * @return the value
   * @throws TqException {@code INVALID_ARGUMENT} naming the text and the offending position
   */
  static Object parse(String text) {
    Json reader = new Json(text);
    reader.skipWhitespace();
    Object value = reader.value(0);
    reader.skipWhitespace();
    if (reader.pos != text.length()) {
      throw reader.error("unexpected text after the value");
    }
    return value;
  }

  private Object value(int depth) {
    if (depth > MAX_DEPTH) {
      throw error("nesting deeper than " + MAX_DEPTH);
    }
    if (pos >= text.length()) {
      throw error("a value is missing");
    }
    char c = text.charAt(pos);
    return switch (c) {
      case '{' -> object(depth);
      case '[' -> array(depth);
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> {
        if (c == '-' || (c >= '0' && c <= '9')) {
          yield number();
        }
        throw error("unexpected character '" + c + "'");
      }
    };
  }

  private Map<String, Object> object(int depth) {
    pos++;
    Map<String, Object> map = new LinkedHashMap<>();
    skipWhitespace();
    if (peek() == '}') {
      pos++;
      return Collections.unmodifiableMap(map);
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"') {
        throw error("an object key must be a string");
      }
      int keyAt = pos;
      String key = string();
      skipWhitespace();
      expect(':');
      skipWhitespace();
      Object value = value(depth + 1);
      if (map.containsKey(key)) {
        pos = keyAt;
        throw error("duplicate key \"" + key + "\"");
      }
      map.put(key, value);
      skipWhitespace();
      char c = peek();
      pos++;
      if (c == '}') {
        return Collections.unmodifiableMap(map);
      }
      if (c != ',') {
        pos--;
        throw error("expected ',' or '}'");
      }
    }
  }

  private List<Object> array(int depth) {
    pos++;
    List<Object> list = new ArrayList<>();
    skipWhitespace();
    if (peek() == ']') {
      pos++;
      return Collections.unmodifiableList(list);
    }
    while (true) {
      skipWhitespace();
      list.add(value(depth + 1));
      skipWhitespace();
      char c = peek();
      pos++;
      if (c == ']') {
        return Collections.unmodifiableList(list);
      }
      if (c != ',') {
        pos--;
        throw error("expected ',' or ']'");
      }
    }
  }

  private String string() {
    pos++;
    StringBuilder out = new StringBuilder();
    while (true) {
      if (pos >= text.length()) {
        throw error("unterminated string");
      }
      char c = text.charAt(pos++);
      if (c == '"') {
        return out.toString();
      }
      if (c < 0x20) {
        pos--;
        throw error("control character in a string");
      }
      if (c != '\\') {
        out.append(c);
        continue;
      }
      if (pos >= text.length()) {
        throw error("unterminated string");
      }
      char e = text.charAt(pos++);
      switch (e) {
        case '"', '\\', '/' -> out.append(e);
        case 'b' -> out.append('\b');
        case 'f' -> out.append('\f');
        case 'n' -> out.append('\n');
        case 'r' -> out.append('\r');
        case 't' -> out.append('\t');
        case 'u' -> {
          if (pos + 4 > text.length()) {
            throw error("truncated \\u escape");
          }
          int code = 0;
          for (int i = 0; i < 4; i++) {
            int digit = Character.digit(text.charAt(pos + i), 16);
            if (digit < 0) {
              throw error("bad \\u escape");
            }
            code = code * 16 + digit;
          }
          pos += 4;
          out.append((char) code);
        }
        default -> {
          pos--;
          throw error("bad escape '\\" + e + "'");
        }
      }
    }
  }

  private Object number() {
    int start = pos;
    if (peek() == '-') {
      pos++;
    }
    if (peek() == '0') {
      pos++;
    } else if (isDigit(peek())) {
      digits();
    } else {
      throw error("a digit must follow '-'");
    }
    boolean integer = true;
    if (peek() == '.') {
      integer = false;
      pos++;
      if (!isDigit(peek())) {
        throw error("a digit must follow '.'");
      }
      digits();
    }
    if (peek() == 'e' || peek() == 'E') {
      integer = false;
      pos++;
      if (peek() == '+' || peek() == '-') {
        pos++;
      }
      if (!isDigit(peek())) {
        throw error("a digit must start the exponent");
      }
      digits();
    }
    String literal = text.substring(start, pos);
    if (!integer) {
      double d = Double.parseDouble(literal);
      if (Double.isInfinite(d)) {
        pos = start;
        throw error("number " + literal + " is out of the range of a 64-bit float");
      }
      return d;
    }
    BigInteger big = new BigInteger(literal);
    return big.bitLength() < 64 ? (Object) big.longValueExact() : big;
  }

  private void digits() {
    while (isDigit(peek())) {
      pos++;
    }
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private Object literal(String word, Object value) {
    if (!text.startsWith(word, pos)) {
      throw error("unexpected character '" + text.charAt(pos) + "'");
    }
    pos += word.length();
    return value;
  }

  private void expect(char c) {
    if (peek() != c) {
      throw error("expected '" + c + "'");
    }
    pos++;
  }

  private char peek() {
    return pos < text.length() ? text.charAt(pos) : '\0';
  }

  private void skipWhitespace() {
    while (pos < text.length()) {
      char c = text.charAt(pos);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        return;
      }
      pos++;
    }
  }

  private TqException error(String what) {
    return new TqException(
        ErrorCode.INVALID_ARGUMENT, "invalid JSON '" + text + "' at position " + pos + ": " + what);
  }
}
