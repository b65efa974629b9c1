package org.transferqueue.tensor;

import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The element types of tensors, named as in PyTorch.
 *
 * <p>The {@link #code()} of a constant is stable and is what binary formats store; the {@link
 * #torchName()} is what configuration, metadata and error messages show.
 */
public enum DType {
  /** One byte, 0 or 1. */
  BOOL(0, "bool", 1),
  /** Unsigned 8-bit integer. */
  UINT8(1, "uint8", 1),
  /** Signed 8-bit integer. */
  INT8(2, "int8", 1),
  /** Signed 16-bit integer. */
  INT16(3, "int16", 2),
  /** Signed 32-bit integer. */
  INT32(4, "int32", 4),
  /** Signed 64-bit integer. */
  INT64(5, "int64", 8),
  /** IEEE 754 half precision. */
  FLOAT16(6, "float16", 2),
  /** Brain floating point: the upper 16 bits of a float32. */
  BFLOAT16(7, "bfloat16", 2),
  /** IEEE 754 single precision. */
  FLOAT32(8, "float32", 4),
  /** IEEE 754 double precision. */
  FLOAT64(9, "float64", 8);

  private static final DType[] BY_CODE = values();

  private final int code;
  private final String torchName;
  private final int byteSize;

  DType(int code, String torchName, int byteSize) {
    this.code = code;
    this.torchName = torchName;
    this.byteSize = byteSize;
  }

  /**
   * The stable numeric code stored by binary formats.
   *
   * @return the code, 0 to 9
   */
  public int code() {
    return code;
  }

  /**
   * The PyTorch name, such as {@code float32}.
   *
   * @return the name
   */
  public String torchName() {
    return torchName;
  }

  /**
   * Bytes per element.
   *
   * @return the element size
   */
  public int byteSize() {
    return byteSize;
  }

  /**
   * Whether the type is a floating-point type.
   *
   * @return true for float16, bfloat16, float32 and float64
   */
  public boolean isFloatingPoint() {
    return this == FLOAT16 || this == BFLOAT16 || this == FLOAT32 || this == FLOAT64;
  }

  /**
   * Whether the type holds integers: bool and the integer types.
   *
   * @return true for every type that is not floating-point
   */
  public boolean isInteger() {
    return !isFloatingPoint();
  }

  /** The smallest value of an integer or bool type (Long.MIN_VALUE for floating-point types). */
  long minValue() {
    return switch (this) {
      case BOOL, UINT8 -> 0;
      case INT8 -> Byte.MIN_VALUE;
      case INT16 -> Short.MIN_VALUE;
      case INT32 -> Integer.MIN_VALUE;
      default -> Long.MIN_VALUE;
    };
  }

  /** The largest value of an integer or bool type (Long.MAX_VALUE for floating-point types). */
  long maxValue() {
    return switch (this) {
      case BOOL -> 1;
      case UINT8 -> 0xFF;
      case INT8 -> Byte.MAX_VALUE;
      case INT16 -> Short.MAX_VALUE;
      case INT32 -> Integer.MAX_VALUE;
      default -> Long.MAX_VALUE;
    };
  }

  /**
   * Looks a type up by its PyTorch name; a {@code torch.} prefix is accepted.
   *
   * @param name for example {@code float32} or {@code torch.bfloat16}
   * @return the type
   * @throws TqException with {@code UNKNOWN_DTYPE} naming the value if no type has that name
   */
  public static DType fromName(String name) {
    if (name != null) {
      String plain = name.startsWith("torch.") ? name.substring("torch.".length()) : name;
      for (DType type : BY_CODE) {
        if (type.torchName.equals(plain)) {
          return type;
        }
      }
    }
    throw new TqException(ErrorCode.UNKNOWN_DTYPE, "unknown dtype name '" + name + "'");
  }

  /**
   * Looks a type up by its code.
   *
   * @param code a value returned by {@link #code()}
   * @return the type
   * @throws TqException with {@code UNKNOWN_DTYPE} naming the value if no type has that code
   */
  public static DType fromCode(int code) {
    if (code < 0 || code >= BY_CODE.length) {
      throw new TqException(ErrorCode.UNKNOWN_DTYPE, "unknown dtype code " + code);
    }
    return BY_CODE[code];
  }

  @Override
  public String toString() {
    return torchName;
  }
}
