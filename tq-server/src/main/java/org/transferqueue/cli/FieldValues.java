package org.transferqueue.cli;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.transferqueue.ErrorCode;
import org.transferqueue.JsonWriter;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * Parses the {@code NAME=VALUE} arguments of {@code tq kv put}: {@code NAME=DTYPE:JSON-array}
 * becomes a tensor of that dtype whose shape is the nesting of the arrays ({@code
 * x=float32:[[1,2],[3,4]]} is 2x2), {@code NAME=JSON} any other value ({@code note="hello"}, typed
 * {@code note='"hello"'} in a shell). Every error is a {@link TqException} with a one-line message
 * naming the argument. Stateless.
 */
final class FieldValues {
  /** A dtype prefix: an identifier followed by ':' (no JSON value starts like that). */
  private static final Pattern TENSOR =
      Pattern.compile("([A-Za-z][A-Za-z0-9_.]*):(.*)", Pattern.DOTALL);

  private static final double FLOAT16_MAX = 65504.0;

  private FieldValues() {}

  /**
   * Splits {@code NAME=VALUE}.
   *
   * @param argument the argument
   * @return the name and the value text
   * @throws TqException {@code INVALID_ARGUMENT} without '=' or with an empty name
   */
  static Map.Entry<String, String> split(String argument) {
    int eq = argument.indexOf('=');
    if (eq <= 0) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "argument '" + argument + "' is not NAME=VALUE (NAME=DTYPE:JSON-array or NAME=JSON)");
    }
    return Map.entry(argument.substring(0, eq), argument.substring(eq + 1));
  }

  /**
   * Parses {@code NAME=JSON} arguments (tags) into a map in argument order.
   *
   * @param arguments the arguments
   * @return name to value
   * @throws TqException naming the argument for bad JSON or a repeated name
   */
  static Map<String, Object> parseJsonArguments(List<String> arguments) {
    Map<String, Object> values = new LinkedHashMap<>();
    for (String argument : arguments) {
      Map.Entry<String, String> entry = split(argument);
      Object value = json(entry.getKey(), entry.getValue());
      if (values.containsKey(entry.getKey())) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT, "'" + entry.getKey() + "' is given more than once");
      }
      values.put(entry.getKey(), value);
    }
    return values;
  }

  /**
   * Parses field arguments; tensors are allocated from {@code allocator} and owned by the caller,
   * who must close them (on failure the ones already made are closed here).
   *
   * @param arguments {@code NAME=DTYPE:JSON-array} or {@code NAME=JSON} arguments
   * @param allocator where tensor memory comes from
   * @return name to tensor or plain value, in argument order
   * @throws TqException {@code UNKNOWN_DTYPE}, {@code SHAPE_MISMATCH} (ragged arrays), {@code
   *     INVALID_ARGUMENT} (bad JSON, a value out of range of the dtype, a repeated name)
   */
  static Map<String, Object> parseFields(List<String> arguments, BufferAllocator allocator) {
    Map<String, Object> values = new LinkedHashMap<>();
    try {
      for (String argument : arguments) {
        Map.Entry<String, String> entry = split(argument);
        String name = entry.getKey();
        if (values.containsKey(name)) {
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT, "field '" + name + "' is given more than once");
        }
        Matcher tensor = TENSOR.matcher(entry.getValue());
        if (tensor.matches()) {
          values.put(name, tensor(name, tensor.group(1), tensor.group(2), allocator));
        } else {
          values.put(name, json(name, entry.getValue()));
        }
      }
      return values;
    } catch (RuntimeException e) {
      close(values);
      throw e;
    }
  }

  /** Closes the tensors among {@code values}. */
  static void close(Map<String, Object> values) {
    for (Object value : values.values()) {
      if (value instanceof Tensor t) {
        t.close();
      }
    }
  }

  private static Object json(String name, String text) {
    try {
      return Json.parse(text);
    } catch (TqException e) {
      throw new TqException(e.code(), "'" + name + "': " + e.getMessage(), e);
    }
  }

  /**
   * Builds a tensor from {@code DTYPE:JSON}.
   *
   * @param name the field, for messages
   * @param dtypeName a dtype name such as {@code int64}
   * @param text the JSON number or (nested) array
   * @param allocator where the tensor's memory comes from
   * @return a tensor the caller owns
   */
  static Tensor tensor(String name, String dtypeName, String text, BufferAllocator allocator) {
    DType dtype;
    try {
      dtype = DType.fromName(dtypeName);
    } catch (TqException e) {
      throw new TqException(
          ErrorCode.UNKNOWN_DTYPE,
          "field '"
              + name
              + "': unknown dtype '"
              + dtypeName
              + "' (known: "
              + Arrays.stream(DType.values()).map(DType::torchName).toList()
              + "; a string value is JSON: "
              + name
              + "='\"text\"')");
    }
    Object parsed = json(name, text);
    List<Long> shape = new ArrayList<>();
    for (Object level = parsed; level instanceof List<?> list; ) {
      shape.add((long) list.size());
      level = list.isEmpty() ? null : list.getFirst();
    }
    long[] dims = shape.stream().mapToLong(Long::longValue).toArray();
    List<Object> leaves = new ArrayList<>();
    flatten(name, text, parsed, dims, 0, leaves);
    Tensor tensor = Tensor.allocate(allocator, dtype, dims);
    try {
      for (int i = 0; i < leaves.size(); i++) {
        set(tensor, i, leaves.get(i), name, dtype);
      }
      return tensor;
    } catch (RuntimeException e) {
      tensor.close();
      throw e;
    }
  }

  private static void flatten(
      String name, String text, Object value, long[] dims, int depth, List<Object> leaves) {
    if (depth == dims.length) {
      if (value instanceof List<?>) {
        throw ragged(name, text, dims);
      }
      leaves.add(value);
      return;
    }
    if (!(value instanceof List<?> list) || list.size() != dims[depth]) {
      throw ragged(name, text, dims);
    }
    for (Object element : list) {
      flatten(name, text, element, dims, depth + 1, leaves);
    }
  }

  private static TqException ragged(String name, String text, long[] dims) {
    return new TqException(
        ErrorCode.SHAPE_MISMATCH,
        "field '"
            + name
            + "': ragged array "
            + text
            + " (the first elements give shape "
            + Arrays.toString(dims)
            + ")");
  }

  private static void set(Tensor tensor, long index, Object leaf, String name, DType dtype) {
    if (dtype == DType.BOOL) {
      switch (leaf) {
        case Boolean b -> tensor.setBoolean(index, b);
        case Long l when l == 0 || l == 1 -> tensor.setBoolean(index, l == 1);
        case Long l -> throw outOfRange(name, dtype, leaf);
        case BigInteger big -> throw outOfRange(name, dtype, leaf);
        default -> throw notA(name, dtype, leaf, "a boolean (true, false, 0 or 1)");
      }
      return;
    }
    if (!(leaf instanceof Number)) {
      throw notA(name, dtype, leaf, "a number");
    }
    if (dtype.isFloatingPoint()) {
      double d = ((Number) leaf).doubleValue();
      double max =
          switch (dtype) {
            case FLOAT16 -> FLOAT16_MAX;
            case FLOAT32, BFLOAT16 -> Float.MAX_VALUE;
            default -> Double.MAX_VALUE;
          };
      if (Math.abs(d) > max) {
        throw outOfRange(name, dtype, leaf);
      }
      tensor.setDouble(index, d);
      return;
    }
    if (leaf instanceof Double) {
      throw notA(name, dtype, leaf, "an integer");
    }
    if (!(leaf instanceof Long l)) {
      throw outOfRange(name, dtype, leaf);
    }
    long min =
        switch (dtype) {
          case UINT8 -> 0;
          case INT8 -> Byte.MIN_VALUE;
          case INT16 -> Short.MIN_VALUE;
          case INT32 -> Integer.MIN_VALUE;
          default -> Long.MIN_VALUE;
        };
    long max =
        switch (dtype) {
          case UINT8 -> 0xFF;
          case INT8 -> Byte.MAX_VALUE;
          case INT16 -> Short.MAX_VALUE;
          case INT32 -> Integer.MAX_VALUE;
          default -> Long.MAX_VALUE;
        };
    if (l < min || l > max) {
      throw outOfRange(name, dtype, leaf);
    }
    tensor.setLong(index, l);
  }

  /** The element is of the wrong kind for the dtype: {@code what} names the kind it must be. */
  private static TqException notA(String name, DType dtype, Object leaf, String what) {
    return new TqException(
        ErrorCode.INVALID_ARGUMENT,
        "field '"
            + name
            + "': element "
            + JsonWriter.COMPACT.write(leaf)
            + " is not "
            + what
            + " (dtype "
            + dtype
            + ")");
  }

  private static TqException outOfRange(String name, DType dtype, Object leaf) {
    return new TqException(
        ErrorCode.INVALID_ARGUMENT,
        "field '"
            + name
            + "': value "
            + JsonWriter.COMPACT.write(leaf)
            + " is out of range for "
            + dtype);
  }
}
