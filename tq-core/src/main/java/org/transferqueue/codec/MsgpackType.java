package org.transferqueue.codec;

/** The msgpack type of a format byte, as {@link MsgpackReader#peekType()} reports it. */
public enum MsgpackType {
  /** nil ({@code 0xc0}). */
  NIL,
  /** true or false. */
  BOOLEAN,
  /** A fixint, uint 8 to 64 or int 8 to 64. */
  INTEGER,
  /** float 32 or float 64. */
  FLOAT,
  /** fixstr or str 8 to 32. */
  STRING,
  /** bin 8 to 32. */
  BINARY,
  /** fixarray, array 16 or 32. */
  ARRAY,
  /** fixmap, map 16 or 32. */
  MAP,
  /** fixext or ext 8 to 32. */
  EXTENSION,
  /** {@code 0xc1}, which msgpack never uses. */
  NEVER_USED;

  private static final MsgpackType[] BY_FORMAT = new MsgpackType[256];

  static {
    for (int format = 0; format < 256; format++) {
      BY_FORMAT[format] = classify(format);
    }
  }

  /**
   * The type of a format byte.
   *
   * @param format the format byte, 0 to 255
   * @return its type
   */
  public static MsgpackType of(int format) {
    return BY_FORMAT[format & 0xFF];
  }

  private static MsgpackType classify(int format) {
    if (format <= 0x7F || format >= 0xE0) {
      return INTEGER;
    }
    if (format <= 0x8F) {
      return MAP;
    }
    if (format <= 0x9F) {
      return ARRAY;
    }
    if (format <= 0xBF) {
      return STRING;
    }
    return switch (format) {
      case MsgpackReader.NIL -> NIL;
      case MsgpackReader.NEVER_USED -> NEVER_USED;
      case MsgpackReader.FALSE, MsgpackReader.TRUE -> BOOLEAN;
      case MsgpackReader.BIN8, MsgpackReader.BIN16, MsgpackReader.BIN32 -> BINARY;
      case MsgpackReader.FLOAT32, MsgpackReader.FLOAT64 -> FLOAT;
      case MsgpackReader.STR8, MsgpackReader.STR16, MsgpackReader.STR32 -> STRING;
      case MsgpackReader.ARRAY16, MsgpackReader.ARRAY32 -> ARRAY;
      case MsgpackReader.MAP16, MsgpackReader.MAP32 -> MAP;
      case MsgpackReader.EXT8,
          MsgpackReader.EXT16,
          MsgpackReader.EXT32,
          MsgpackReader.FIXEXT1,
          MsgpackReader.FIXEXT2,
          MsgpackReader.FIXEXT4,
          MsgpackReader.FIXEXT8,
          MsgpackReader.FIXEXT16 ->
          EXTENSION;
      default -> INTEGER;
    };
  }
}
