import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.server.config.TqConfigs;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The Java side of the Python interoperability tests (python/tests/test_interop.py), run as a
 * single-file source program on the server jar's class path:
 *
 * <pre>
 * java -cp tq-server-all.jar Interop.java put CONFIG PARTITION ROWS   # writes the seeded data set
 * java -cp tq-server-all.jar Interop.java get CONFIG PARTITION KEY... # prints what it reads as JSON
 * </pre>
 *
 * <p>The data set is the one python/tests/interop_data.py builds, byte for byte: for every dtype a
 * dense column {@code d_<dtype>} of shape (rows, 2, 3) and a jagged column {@code j_<dtype>} whose
 * row r has shape (r + 1, 2), filled with the bytes {@code (i * 37 + salt * 11 + 3) mod 256}
 * (booleans: {@code (i + salt) mod 2}); an object column {@code o} of maps holding every value kind
 * (integers, floats, strings, bytes, null, booleans, lists, maps, and tensors of every dtype nested
 * in them) and an object column {@code s} of strings. Keys are {@code k0 .. k<rows-1>}.
 *
 * <p>The JSON dump is exact: tensors as dtype, shape and hex bytes, doubles as the hex of their
 * bits, byte strings as hex.
 */
public final class Interop {
  private Interop() {}

  public static void main(String[] args) throws Exception {
    TqConfig config = TqConfigs.load(Path.of(args[1]), System.getenv());
    String partition = args[2];
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    try (TqClient tq = TqClient.connect(config)) {
      switch (args[0]) {
        case "put" -> {
          int rows = Integer.parseInt(args[3]);
          List<String> keys = new ArrayList<>();
          for (int r = 0; r < rows; r++) {
            keys.add("k" + r);
          }
          try (Batch batch = dataSet(tq.allocator(), rows)) {
            tq.kv().batchPut(keys, partition, batch, null);
          }
          out.println("{\"put\": " + rows + "}");
        }
        case "get" -> {
          List<String> keys = Arrays.asList(args).subList(3, args.length);
          try (Batch batch = tq.kv().batchGet(keys, partition, null)) {
            out.println(dump(batch));
          }
        }
        default -> throw new IllegalArgumentException("mode put or get, not " + args[0]);
      }
    }
  }

  static byte[] pattern(DType dtype, long numel, int salt) {
    byte[] bytes = new byte[Math.toIntExact(numel * dtype.byteSize())];
    for (int i = 0; i < bytes.length; i++) {
      bytes[i] =
          dtype == DType.BOOL ? (byte) ((i + salt) % 2) : (byte) ((i * 37 + salt * 11 + 3) % 256);
    }
    return bytes;
  }

  static Tensor tensor(BufferAllocator allocator, DType dtype, int salt, long... shape) {
    long numel = 1;
    for (long d : shape) {
      numel *= d;
    }
    return Tensor.ofBytes(allocator, dtype, pattern(dtype, numel, salt), shape);
  }

  static Batch dataSet(BufferAllocator allocator, int rows) {
    Batch.Builder builder = Batch.builder();
    for (DType dtype : DType.values()) {
      builder.dense("d_" + dtype.torchName(), tensor(allocator, dtype, dtype.code(), rows, 2, 3));
    }
    for (DType dtype : DType.values()) {
      List<Tensor> jagged = new ArrayList<>();
      for (int r = 0; r < rows; r++) {
        jagged.add(tensor(allocator, dtype, 100 + dtype.code() * 7 + r, r + 1, 2));
      }
      builder.add("j_" + dtype.torchName(), JaggedColumn.copyOf(allocator, dtype, jagged));
      jagged.forEach(Tensor::close);
    }
    List<Object> objects = new ArrayList<>();
    List<Object> strings = new ArrayList<>();
    for (int r = 0; r < rows; r++) {
      Map<String, Object> value = new LinkedHashMap<>();
      value.put("i", (long) r);
      value.put("neg", -1_000_000_000_000L - r);
      value.put("f", r + 0.25);
      value.put("s", "caf\u00e9 \u4e2d " + r);
      value.put("b", new byte[] {0, 1, (byte) 255, (byte) r});
      value.put("none", null);
      value.put("t", r % 2 == 0);
      value.put("l", Arrays.asList(1L, 2.5, null, "x", List.of(true)));
      List<Object> tensors = new ArrayList<>();
      for (DType dtype : DType.values()) {
        tensors.add(tensor(allocator, dtype, 200 + dtype.code() + r, 2, r + 1));
      }
      value.put("tensors", tensors);
      value.put("nested", Map.of("inner", tensor(allocator, DType.FLOAT16, 300 + r, r + 1)));
      value.put("top", tensor(allocator, DType.INT64, 400 + r, 3));
      objects.add(value);
      strings.add("row " + r);
    }
    builder.objects("o", objects);
    builder.objects("s", strings);
    return builder.build();
  }

  static String dump(Batch batch) {
    StringBuilder json = new StringBuilder("{");
    boolean first = true;
    for (String field : batch.fields()) {
      if (!first) {
        json.append(", ");
      }
      first = false;
      string(json, field);
      json.append(": ");
      column(json, batch.column(field));
    }
    return json.append("}").toString();
  }

  static void column(StringBuilder json, Column column) {
    switch (column) {
      case DenseColumn dense -> {
        json.append("{\"kind\": \"dense\", \"tensor\": ");
        tensor(json, dense.tensor());
        json.append("}");
      }
      case JaggedColumn jagged -> {
        json.append("{\"kind\": \"jagged\", \"rows\": [");
        for (int r = 0; r < jagged.rowCount(); r++) {
          json.append(r == 0 ? "" : ", ");
          tensor(json, jagged.row(r));
        }
        json.append("]}");
      }
      case ObjectColumn objects -> {
        json.append("{\"kind\": \"objects\", \"values\": [");
        for (int r = 0; r < objects.rowCount(); r++) {
          json.append(r == 0 ? "" : ", ");
          value(json, objects.get(r));
        }
        json.append("]}");
      }
      default -> throw new IllegalStateException("column kind " + column.kind());
    }
  }

  static void tensor(StringBuilder json, Tensor tensor) {
    json.append("{\"dtype\": \"").append(tensor.dtype().torchName()).append("\", \"shape\": [");
    long[] shape = tensor.shape();
    for (int i = 0; i < shape.length; i++) {
      json.append(i == 0 ? "" : ", ").append(shape[i]);
    }
    json.append("], \"hex\": \"").append(HexFormat.of().formatHex(tensor.toByteArray())).append("\"}");
  }

  static void value(StringBuilder json, Object value) {
    switch (value) {
      case null -> json.append("null");
      case Boolean b -> json.append(b);
      case Long l -> json.append(l);
      case BigInteger big -> json.append(big);
      case Double d -> json.append("{\"f64\": \"")
          .append(Long.toHexString(Double.doubleToRawLongBits(d))).append("\"}");
      case String s -> string(json, s);
      case byte[] bytes -> json.append("{\"bytes\": \"").append(HexFormat.of().formatHex(bytes))
          .append("\"}");
      case Tensor t -> {
        json.append("{\"tensor\": ");
        tensor(json, t);
        json.append("}");
      }
      case List<?> list -> {
        json.append("[");
        for (int i = 0; i < list.size(); i++) {
          json.append(i == 0 ? "" : ", ");
          value(json, list.get(i));
        }
        json.append("]");
      }
      case Map<?, ?> map -> {
        json.append("{\"map\": {");
        boolean first = true;
        for (Map.Entry<?, ?> e : map.entrySet()) {
          json.append(first ? "" : ", ");
          first = false;
          string(json, String.valueOf(e.getKey()));
          json.append(": ");
          value(json, e.getValue());
        }
        json.append("}}");
      }
      default -> throw new IllegalStateException("value of " + value.getClass());
    }
  }

  static void string(StringBuilder json, String s) {
    json.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        json.append('\\').append(c);
      } else if (c < 0x20 || c > 0x7e) {
        json.append(String.format("\\u%04x", (int) c));
      } else {
        json.append(c);
      }
    }
    json.append('"');
  }
}
