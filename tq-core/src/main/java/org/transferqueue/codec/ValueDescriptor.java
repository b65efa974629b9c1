package org.transferqueue.codec;

/**
 * Constants of the msgpack encoding of object values (the Java-native wire profile).
 *
 * <p>An encoded value is a main frame (msgpack) plus zero or more aux frames holding tensor bytes.
 * Java values map to msgpack as follows:
 *
 * <pre>
 *  Java value                         msgpack                      decodes as
 *  ---------------------------------  ---------------------------  ----------------------------
 *  null                               nil                          null
 *  Boolean                            bool                         Boolean
 *  Byte, Short, Integer, Long         int                          Long
 *  BigInteger in [-2^63, 2^64 - 1]    int (uint 64 above 2^63-1)   Long, BigInteger above 2^63-1
 *  Float, Double                      float 64                     Double
 *  String                             str (UTF-8)                  String
 *  byte[]                             bin                          byte[]
 *  List, other Collection             array                        List (ArrayList)
 *  Map                                map                          Map (LinkedHashMap, in order)
 *  Tensor                             ext 3 + one aux frame        Tensor (view or copy)
 *  OpaqueValue                        ext 1 or 2, verbatim         OpaqueValue
 * </pre>
 *
 * <p>A tensor is the extension {@link #EXT_TENSOR} whose payload is the msgpack array {@code
 * [dtype_name: str, shape: array<int>, buffer_index: int]}; aux frame {@code buffer_index}
 * (counting from 1; frame 0 is the main frame) holds its {@code nbytes} bytes, row-major,
 * little-endian. Decoders also accept the five-element form {@code [dtype, shape, index,
 * byte_offset, byte_length]} that addresses a slice of a shared aux frame.
 */
public final class ValueDescriptor {
  /** Extension type of an opaque foreign object (upstream pickle); kept verbatim. */
  public static final byte EXT_OPAQUE = 1;

  /** Extension type of a foreign callable (upstream cloudpickle); kept verbatim. */
  public static final byte EXT_CALLABLE = 2;

  /** Extension type of a dense tensor reference. */
  public static final byte EXT_TENSOR = 3;

  /** Extension type of a nested (jagged or strided) tensor; not decoded by this version. */
  public static final byte EXT_NESTED_TENSOR = 4;

  /** Extension type of a numpy array; not decoded by this version. */
  public static final byte EXT_NDARRAY = 5;

  /** Deepest nesting of lists and maps accepted when encoding or decoding. */
  public static final int MAX_DEPTH = 256;

  /** Highest tensor rank accepted when decoding. */
  public static final int MAX_RANK = 64;

  private ValueDescriptor() {}
}
