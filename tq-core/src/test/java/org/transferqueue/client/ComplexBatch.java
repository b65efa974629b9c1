package org.transferqueue.client;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The COMPLEX(I) fixture of the acceptance scenarios (client-api §4): for an index list I, a batch
 * of 14 columns covering every column kind, four dtypes, ragged rows with +Inf and NaN, strings,
 * maps and byte strings. Row {@code r} is built from {@code i = I[r]}.
 *
 * <p>{@link #extended} adds the remaining dtypes, scalar rows, nulls, u64 values and tensors nested
 * inside object values.
 */
final class ComplexBatch {
  /** The 14 columns of COMPLEX(I), in insertion order. */
  static final List<String> FIELDS =
      List.of(
          "tensor_f32",
          "tensor_i64",
          "tensor_bf16",
          "tensor_f16",
          "nested_jagged",
          "nested_strided",
          "list_int",
          "list_str",
          "list_obj",
          "np_array",
          "np_bytes_str",
          "np_obj",
          "special_val",
          "non_tensor_stack");

  /** The columns {@link #extended} adds to the 14 of COMPLEX(I). */
  static final List<String> EXTRA_FIELDS =
      List.of(
          "tensor_bool",
          "tensor_u8",
          "tensor_i8",
          "tensor_i16",
          "tensor_i32",
          "scalar_f64",
          "nullable_obj",
          "tensor_in_obj",
          "u64_obj");

  private ComplexBatch() {}

  /**
   * COMPLEX(from .. to-1).
   *
   * @return a batch the caller owns
   */
  static Batch range(BufferAllocator allocator, long from, long to) {
    return of(allocator, LongStream.range(from, to).toArray());
  }

  /**
   * COMPLEX(I).
   *
   * @return a batch the caller owns
   */
  static Batch of(BufferAllocator allocator, long... indexes) {
    return builder(allocator, indexes).build();
  }

  /**
   * COMPLEX(I) plus {@link #EXTRA_FIELDS}.
   *
   * @return a batch the caller owns
   */
  static Batch extended(BufferAllocator allocator, long... indexes) {
    int n = indexes.length;
    Batch.Builder builder = builder(allocator, indexes);
    boolean[] bools = new boolean[n * 2];
    long[] u8 = new long[n * 2];
    long[] i8 = new long[n * 2];
    long[] i16 = new long[n * 2];
    long[] i32 = new long[n * 2];
    double[] scalars = new double[n];
    List<Object> nullable = new ArrayList<>();
    List<Object> withTensor = new ArrayList<>();
    List<Object> u64 = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      long i = indexes[r];
      bools[2 * r] = i % 2 == 0;
      bools[2 * r + 1] = true;
      u8[2 * r] = 255 - (i % 256);
      u8[2 * r + 1] = i % 256;
      i8[2 * r] = -128 + (i % 256);
      i8[2 * r + 1] = 127;
      i16[2 * r] = Short.MIN_VALUE + i;
      i16[2 * r + 1] = Short.MAX_VALUE - i;
      i32[2 * r] = Integer.MIN_VALUE + i;
      i32[2 * r + 1] = Integer.MAX_VALUE - i;
      scalars[r] = i == 0 ? Double.NEGATIVE_INFINITY : i * 0.5;
      nullable.add(r % 2 == 0 ? null : "present_" + i);
      Map<String, Object> holder = new LinkedHashMap<>();
      holder.put("name", "holder_" + i);
      holder.put("values", Tensor.ofLongs(allocator, DType.INT64, new long[] {i, -i}, 2));
      holder.put("nothing", null);
      withTensor.add(holder);
      u64.add(BigInteger.ONE.shiftLeft(64).subtract(BigInteger.valueOf(i + 1)));
    }
    return builder
        .dense("tensor_bool", Tensor.ofBooleans(allocator, bools, n, 2))
        .dense("tensor_u8", Tensor.ofLongs(allocator, DType.UINT8, u8, n, 2))
        .dense("tensor_i8", Tensor.ofLongs(allocator, DType.INT8, i8, n, 2))
        .dense("tensor_i16", Tensor.ofLongs(allocator, DType.INT16, i16, n, 2))
        .dense("tensor_i32", Tensor.ofLongs(allocator, DType.INT32, i32, n, 2))
        .dense("scalar_f64", Tensor.ofDoubles(allocator, DType.FLOAT64, scalars, n))
        .add("nullable_obj", new ObjectColumn(nullable))
        .add("tensor_in_obj", new ObjectColumn(withTensor))
        .add("u64_obj", new ObjectColumn(u64))
        .build();
  }

  private static Batch.Builder builder(BufferAllocator allocator, long[] indexes) {
    int n = indexes.length;
    float[] five = new float[n * 5];
    long[] fiveLongs = new long[n * 5];
    double[] three = new double[n * 3];
    float[] special = new float[n * 3];
    List<long[]> jaggedShapes = new ArrayList<>();
    List<Float> jaggedValues = new ArrayList<>();
    List<long[]> stridedShapes = new ArrayList<>();
    float[] strided = new float[n * 12];
    List<Object> listInt = new ArrayList<>();
    List<Object> listStr = new ArrayList<>();
    List<Object> listObj = new ArrayList<>();
    List<Object> bytes = new ArrayList<>();
    List<Object> objs = new ArrayList<>();
    List<Object> stack = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      long i = indexes[r];
      for (int k = 0; k < 5; k++) {
        five[r * 5 + k] = i + k;
        fiveLongs[r * 5 + k] = i + k;
      }
      for (int k = 0; k < 3; k++) {
        three[r * 3 + k] = i + k;
      }
      special[r * 3] = Float.POSITIVE_INFINITY;
      special[r * 3 + 1] = Float.NaN;
      special[r * 3 + 2] = i;
      int length = 2 + (int) (i % 4);
      jaggedShapes.add(new long[] {length});
      for (int k = 0; k < length; k++) {
        float value = i + k;
        if (k == 0 && r == 0) {
          value = Float.POSITIVE_INFINITY;
        } else if (k == 0 && r == 1) {
          value = Float.NaN;
        }
        jaggedValues.add(value);
      }
      stridedShapes.add(new long[] {3, 4});
      Arrays.fill(strided, r * 12, r * 12 + 12, i);
      listInt.add(10 * i);
      listStr.add("sample_" + i);
      listObj.add(orderedMap("key", "value_" + i, "num", i));
      bytes.add(("bs_" + i).getBytes(StandardCharsets.UTF_8));
      objs.add("obj_" + i);
      stack.add(orderedMap("idx", i, "text", "non_tensor_" + i));
    }
    float[] jagged = new float[jaggedValues.size()];
    for (int k = 0; k < jagged.length; k++) {
      jagged[k] = jaggedValues.get(k);
    }
    return Batch.builder()
        .dense("tensor_f32", Tensor.ofFloats(allocator, DType.FLOAT32, five, n, 5))
        .dense("tensor_i64", Tensor.ofLongs(allocator, DType.INT64, fiveLongs, n, 5))
        .dense("tensor_bf16", Tensor.ofFloats(allocator, DType.BFLOAT16, five, n, 5))
        .dense("tensor_f16", Tensor.ofFloats(allocator, DType.FLOAT16, five, n, 5))
        .add(
            "nested_jagged",
            JaggedColumn.fromValues(
                Tensor.ofFloats(allocator, DType.FLOAT32, jagged, jagged.length), jaggedShapes))
        .add(
            "nested_strided",
            JaggedColumn.fromValues(
                Tensor.ofFloats(allocator, DType.FLOAT32, strided, strided.length), stridedShapes))
        .add("list_int", new ObjectColumn(listInt))
        .add("list_str", new ObjectColumn(listStr))
        .add("list_obj", new ObjectColumn(listObj))
        .dense("np_array", Tensor.ofDoubles(allocator, DType.FLOAT64, three, n, 3))
        .add("np_bytes_str", new ObjectColumn(bytes))
        .add("np_obj", new ObjectColumn(objs))
        .dense("special_val", Tensor.ofFloats(allocator, DType.FLOAT32, special, n, 3))
        .add("non_tensor_stack", new ObjectColumn(stack));
  }

  private static Map<String, Object> orderedMap(String k1, Object v1, String k2, Object v2) {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put(k1, v1);
    map.put(k2, v2);
    return map;
  }
}
