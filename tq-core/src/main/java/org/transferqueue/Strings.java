package org.transferqueue;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Collection;

/**
 * The rule every string of the system follows, and the quoting of strings in error messages.
 *
 * <p>Every string TransferQueue stores or sends (partition ids, task names, field names, keys, tag
 * and extra-info keys and values, strings inside object values) must be valid Unicode, that is
 * encodable as UTF-8: the wire protocol carries strings as UTF-8 and other clients (Python's
 * msgpack) decode them strictly. A Java string can hold a <em>lone surrogate</em>, a UTF-16 code
 * unit in {@code U+D800..U+DFFF} that is not half of a high-low pair; it has no UTF-8 form, so such
 * a string is refused with {@link ErrorCode#INVALID_ARGUMENT} before anything is stored or sent, on
 * every path, instead of being stored in a changed form. Received bytes that are not valid UTF-8
 * are refused by the decoders in the same way ({@link #decodeUtf8}). Names (partition ids, keys,
 * field names, task names) must also be non-empty ({@link #checkName}).
 *
 * <p>The checks scan the chars once and allocate nothing unless they fail. Messages show strings
 * through {@link #quote}, which escapes lone surrogates and control characters, so that a message
 * that echoes a refused string can itself always be encoded. Stateless and thread-safe.
 */
public final class Strings {
  /** The longest part of a string {@link #quote} shows, in chars. */
  static final int MAX_QUOTED_CHARS = 120;

  /** The most elements {@link #quote(Collection)} shows. */
  static final int MAX_QUOTED_ELEMENTS = 10;

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private Strings() {}

  /**
   * The index of the first lone surrogate of {@code value}.
   *
   * @param value a string, not null
   * @return the index of the first char in {@code U+D800..U+DFFF} that is not half of a high-low
   *     pair, or -1 when {@code value} is valid Unicode (encodable as UTF-8)
   */
  public static int loneSurrogate(String value) {
    int n = value.length();
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (Character.isSurrogate(c)) {
        if (Character.isHighSurrogate(c)
            && i + 1 < n
            && Character.isLowSurrogate(value.charAt(i + 1))) {
          i++; // a pair: one supplementary code point
        } else {
          return i;
        }
      }
    }
    return -1;
  }

  /**
   * Checks that a string is valid Unicode.
   *
   * @param value the string, or null (which passes)
   * @param what what the string is, for the message ({@code "partition_id"}, {@code "tag value"})
   * @return {@code value}
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} naming {@code what}, showing the string
   *     escaped and the index of its first lone surrogate
   */
  public static String checkWellFormed(String value, String what) {
    if (value != null) {
      int at = loneSurrogate(value);
      if (at >= 0) {
        throw notWellFormed(value, at, what);
      }
    }
    return value;
  }

  /**
   * The error for a string with a lone surrogate, for callers that found it themselves.
   *
   * @param value the string
   * @param index the index of its lone surrogate, as {@link #loneSurrogate} returns it
   * @param what what the string is, for the message
   * @return an {@link ErrorCode#INVALID_ARGUMENT} exception, not thrown
   */
  public static TqException notWellFormed(String value, int index, String what) {
    return new TqException(ErrorCode.INVALID_ARGUMENT, what + " " + notWellFormed(value, index));
  }

  private static String notWellFormed(String value, int index) {
    return quote(value)
        + " is not valid Unicode: lone surrogate "
        + escaped(value.charAt(index))
        + " at index "
        + index
        + ", which UTF-8 cannot encode";
  }

  /**
   * Checks a name: a partition id, key, field name or task name.
   *
   * @param name the name
   * @param what what it is, for the message ({@code "key"})
   * @return {@code name}
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code name} is null, empty or not
   *     valid Unicode
   */
  public static String checkName(String name, String what) {
    if (name == null) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, what + " is null");
    }
    if (name.isEmpty()) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, what + " is empty");
    }
    return checkWellFormed(name, what);
  }

  /**
   * Checks every element of a list of names as {@link #checkName} does, naming the position of the
   * first bad one: for keys {@code ["", "b"]}, {@code keys ["", "b"]: key at position 0 is empty}.
   * The list itself is the caller's to check (null, empty, duplicates).
   *
   * @param names the names; elements of any type, so that a list that reached here through an
   *     unchecked conversion gets a typed error rather than a cast failure
   * @param what what one element is, for the message ({@code "key"}; the list is {@code what +
   *     "s"})
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} for a null, non-string, empty or not
   *     well-formed element
   */
  public static void checkNames(Collection<?> names, String what) {
    int position = 0;
    for (Object name : names) {
      if (!(name instanceof String s) || s.isEmpty() || loneSurrogate(s) >= 0) {
        throw badElement(names, position, name, what);
      }
      position++;
    }
  }

  private static TqException badElement(
      Collection<?> names, int position, Object name, String what) {
    String problem =
        switch (name) {
          case null -> "is null";
          case String s when s.isEmpty() -> "is empty";
          case String s -> notWellFormed(s, loneSurrogate(s));
          default -> "is a " + name.getClass().getName() + ", not a string";
        };
    return new TqException(
        ErrorCode.INVALID_ARGUMENT,
        what + "s " + quote(names) + ": " + what + " at position " + position + " " + problem);
  }

  /**
   * A string as a message shows it: in double quotes, with backslash, double quote, control
   * characters and lone surrogates escaped ({@code \n}, {@code \u005CuD800}), cut after {@value
   * #MAX_QUOTED_CHARS} chars. An empty string shows as {@code ""}, null as {@code null}.
   *
   * @param value the string, or null
   * @return the quoted form, always valid Unicode
   */
  public static String quote(String value) {
    if (value == null) {
      return "null";
    }
    int end = Math.min(value.length(), MAX_QUOTED_CHARS);
    if (end < value.length() && Character.isHighSurrogate(value.charAt(end - 1))) {
      end--; // do not cut a pair in two
    }
    StringBuilder out = new StringBuilder(end + 8);
    appendQuoted(out, value, end);
    if (end < value.length()) {
      out.append("... (").append(value.length()).append(" chars)");
    }
    return out.toString();
  }

  /**
   * Appends a string as a JSON string literal: in double quotes, with backslash, double quote,
   * control characters, DEL and lone surrogates escaped ({@code \n}, {@code \u005Cu007f}, {@code
   * \u005CuD800}), so that the result is valid JSON and valid Unicode whatever the string holds.
   *
   * @param out where the literal goes
   * @param value the string
   * @return {@code out}
   */
  public static StringBuilder appendQuoted(StringBuilder out, String value) {
    return appendQuoted(out, value, value.length());
  }

  private static StringBuilder appendQuoted(StringBuilder out, String value, int end) {
    out.append('"');
    for (int i = 0; i < end; i++) {
      char c = value.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20 || c == 0x7F) {
            out.append(escaped(c));
          } else if (Character.isHighSurrogate(c)
              && i + 1 < value.length()
              && Character.isLowSurrogate(value.charAt(i + 1))) {
            out.append(c).append(value.charAt(++i));
          } else if (Character.isSurrogate(c)) {
            out.append(escaped(c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"');
  }

  /**
   * A list as a message shows it: {@code ["", "b", null, 3]}, strings {@linkplain #quote(String)
   * quoted}, at most {@value #MAX_QUOTED_ELEMENTS} elements followed by the total count.
   *
   * @param values the elements, or null
   * @return the quoted form, always valid Unicode
   */
  public static String quote(Collection<?> values) {
    if (values == null) {
      return "null";
    }
    StringBuilder out = new StringBuilder().append('[');
    int shown = 0;
    for (Object value : values) {
      if (shown == MAX_QUOTED_ELEMENTS) {
        out.append(", ... (").append(values.size()).append(" in all)");
        break;
      }
      if (shown > 0) {
        out.append(", ");
      }
      out.append(
          value instanceof String s ? quote(s) : escapeLoneSurrogates(String.valueOf(value)));
      shown++;
    }
    return out.append(']').toString();
  }

  /**
   * {@code text} with every lone surrogate replaced by its escape ({@code \u005CuD800}), so that it
   * can be encoded as UTF-8: for messages that may echo a string that was refused.
   *
   * @param text the text, not null
   * @return {@code text} itself when it is valid Unicode, else the escaped copy
   */
  public static String escapeLoneSurrogates(String text) {
    int at = loneSurrogate(text);
    if (at < 0) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length() + 12).append(text, 0, at);
    for (int i = at; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        out.append(c).append(text.charAt(++i));
      } else if (Character.isSurrogate(c)) {
        out.append(escaped(c));
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  /**
   * Decodes UTF-8 strictly: the JDK's fast path ({@code new String(bytes, UTF_8)}, a bulk copy for
   * ASCII) replaces malformed input with U+FFFD, so only a result that holds U+FFFD (never the case
   * for ASCII or Latin-1 text) is checked again, strictly, to tell a real U+FFFD from a malformed
   * sequence such as an encoded surrogate ({@code ED A0 80}) or an overlong form.
   *
   * @param bytes the bytes
   * @param offset where the string starts
   * @param length its length in bytes
   * @return the string, or null if the bytes are not valid UTF-8
   */
  public static String decodeUtf8(byte[] bytes, int offset, int length) {
    String value = new String(bytes, offset, length, StandardCharsets.UTF_8);
    if (value.indexOf('\uFFFD') >= 0) {
      try {
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(bytes, offset, length));
      } catch (CharacterCodingException e) {
        return null;
      }
    }
    return value;
  }

  private static String escaped(char c) {
    return new String(
        new char[] {
          '\\', 'u', HEX[c >> 12], HEX[(c >> 8) & 0xF], HEX[(c >> 4) & 0xF], HEX[c & 0xF]
        });
  }
}
