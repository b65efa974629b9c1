package org.transferqueue.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
import org.transferqueue.ErrorCode;
import org.transferqueue.JsonWriter;
import org.transferqueue.Strings;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.controller.Names;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code tq kv}: inspect and edit the key-value data of a running system from a shell. Each
 * subcommand connects a non-owning client to the addresses of {@code --config} and closes it at the
 * end; failures exit with status 1 and one line naming the offending keys, fields or values.
 */
@Command(
    name = "kv",
    description = "Read and write key-value samples of a running system.",
    subcommands = {
      KvCommand.Put.class,
      KvCommand.Get.class,
      KvCommand.ListKeys.class,
      KvCommand.Clear.class
    },
    mixinStandardHelpOptions = true)
final class KvCommand implements Runnable {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** {@code tq kv put}: writes fields and tags of one key. */
  @Command(
      name = "put",
      description = "Write fields and tags of one key (creating key and partition if needed).",
      footer = {
        "%nExample (bash; the single quotes keep brackets and JSON quotes from the shell):",
        "  tq kv put --config tq.yaml --partition train --key k1 \\",
        "    'x=float32:[[1,2],[3,4]]' note='\"hello\"' --tag status='\"done\"'"
      })
  static final class Put extends ConnectedCommand {
    @Option(names = "--partition", required = true, description = "The partition.")
    String partition;

    @Option(names = "--key", required = true, description = "The key.")
    String key;

    @Option(names = "--tag", description = "A tag NAME=JSON; repeatable.")
    List<String> tags = new ArrayList<>();

    @Parameters(
        paramLabel = "FIELD",
        arity = "0..*",
        description =
            "NAME=DTYPE:JSON-array for a tensor ('x=float32:[[1,2],[3,4]]'),"
                + " NAME=JSON for any other value (note='\"hello\"': the shell's quotes keep"
                + " the JSON string's).")
    List<String> fields = new ArrayList<>();

    @Override
    int run(TqClient tq, PrintWriter out) {
      Map<String, Object> tag = FieldValues.parseJsonArguments(tags);
      Map<String, Object> values = FieldValues.parseFields(fields, tq.allocator());
      KvBatchMeta meta;
      try {
        meta = tq.kv().put(key, partition, values, tag);
      } finally {
        FieldValues.close(values);
      }
      Map<String, Object> tagsNow = meta.tags().isEmpty() ? Map.of() : meta.tags().getFirst();
      if (json) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("partition", partition);
        result.put("key", key);
        result.put("fields", meta.fields());
        result.put("tags", tagsNow);
        out.println(JsonWriter.COMPACT.write(result));
      } else {
        out.println(
            "put key '"
                + key
                + "' in partition '"
                + partition
                + "': fields "
                + meta.fields()
                + ", tags "
                + JsonWriter.COMPACT.write(tagsNow));
      }
      return 0;
    }
  }

  /** {@code tq kv get}: prints fields of keys. */
  @Command(
      name = "get",
      description = "Print fields of keys as a table (or JSON with --json).",
      footer = {
        "%nA tensor prints as DTYPE[SHAPE] followed by its values as nested lists in the table"
            + " (int64[2x3] [[1,2,3],[4,5,6]]), and in JSON as"
            + " {\"dtype\": \"int64\", \"shape\": [2,3], \"data\": [[1,2,3],[4,5,6]]};"
            + " a tensor nested in an object value (a map or list) is that JSON object in both."
            + " Bytes print as \"base64:...\"."
      })
  static final class Get extends ConnectedCommand {
    @Option(names = "--partition", required = true, description = "The partition.")
    String partition;

    @Option(names = "--key", required = true, description = "A key; repeatable.")
    List<String> keys = new ArrayList<>();

    @Option(
        names = "--field",
        description =
            "A field to print; repeatable (default: every field produced for all the keys).")
    List<String> selected = new ArrayList<>();

    @Override
    int run(TqClient tq, PrintWriter out) {
      requireKeys(tq, partition, keys);
      Map<String, Map<String, Object>> rows = new LinkedHashMap<>();
      if (selected.isEmpty()) {
        // Every field of each key, even when the keys do not share them.
        for (String key : keys) {
          List<String> fields =
              tq.client().resolveKeys(partition, List.of(key), false).fieldNames();
          Map<String, Object> row = new LinkedHashMap<>();
          if (!fields.isEmpty()) {
            try (Batch batch = tq.kv().batchGet(List.of(key), partition, fields)) {
              fill(row, batch, 0);
            }
          }
          rows.put(key, row);
        }
      } else {
        try (Batch batch = tq.kv().batchGet(keys, partition, selected)) {
          for (int i = 0; i < keys.size(); i++) {
            Map<String, Object> row = new LinkedHashMap<>();
            fill(row, batch, i);
            rows.put(keys.get(i), row);
          }
        }
      }
      if (json) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("partition", partition);
        Map<String, Object> keyed = new LinkedHashMap<>();
        rows.forEach(
            (key, row) -> {
              Map<String, Object> fieldsJson = new LinkedHashMap<>();
              row.forEach((field, value) -> fieldsJson.put(field, toJson(value)));
              keyed.put(key, fieldsJson);
            });
        result.put("keys", keyed);
        out.println(JsonWriter.COMPACT.write(result));
      } else {
        TextTable table = new TextTable("KEY", "FIELD", "VALUE");
        rows.forEach(
            (key, row) -> {
              if (row.isEmpty()) {
                table.row(key, "-", "(no fields)");
              }
              row.forEach((field, value) -> table.row(key, field, describe(value)));
            });
        table.print(out);
      }
      return 0;
    }
  }

  /** {@code tq kv list}: prints partitions, keys and tags. */
  @Command(
      name = "list",
      description = "Print partitions, their keys and tags (table, or JSON with --json).")
  static final class ListKeys extends ConnectedCommand {
    @Option(names = "--partition", description = "Only this partition (default: every one).")
    String partition;

    @Override
    int run(TqClient tq, PrintWriter out) {
      if (partition != null) {
        requirePartition(tq, partition);
      }
      Map<String, Map<String, Map<String, Object>>> listing = tq.kv().list(partition);
      if (json) {
        out.println(JsonWriter.COMPACT.write(listing));
        return 0;
      }
      TextTable table = new TextTable("PARTITION", "KEY", "TAGS");
      listing.forEach(
          (id, keys) -> {
            if (keys.isEmpty()) {
              table.row(id, "-", "-");
            }
            keys.forEach((key, tags) -> table.row(id, key, JsonWriter.COMPACT.write(tags)));
          });
      table.print(out);
      return 0;
    }
  }

  /** {@code tq kv clear}: removes keys with their data and tags. */
  @Command(name = "clear", description = "Remove keys, their data and tags.")
  static final class Clear extends ConnectedCommand {
    @Option(names = "--partition", required = true, description = "The partition.")
    String partition;

    @Option(names = "--key", required = true, description = "A key; repeatable.")
    List<String> keys = new ArrayList<>();

    @Override
    int run(TqClient tq, PrintWriter out) {
      requireKeys(tq, partition, keys);
      tq.kv().clear(keys, partition);
      if (json) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("partition", partition);
        result.put("cleared", keys);
        out.println(JsonWriter.COMPACT.write(result));
      } else {
        out.println(
            "cleared "
                + keys.size()
                + (keys.size() == 1 ? " key" : " keys")
                + " from partition '"
                + partition
                + "': "
                + keys);
      }
      return 0;
    }
  }

  private static void fill(Map<String, Object> row, Batch batch, int i) {
    for (String field : batch.fields()) {
      row.put(field, cell(batch.column(field), i));
    }
  }

  /**
   * Fails with {@code INVALID_ARGUMENT} for an empty or not well-formed partition id, and with
   * {@code UNKNOWN_PARTITION} naming the partition and the existing ones.
   */
  static void requirePartition(TqClient tq, String partition) {
    Names.checkPartitionId(partition);
    List<String> partitions = tq.controller().listPartitions();
    if (!partitions.contains(partition)) {
      throw new TqException(
          ErrorCode.UNKNOWN_PARTITION,
          "unknown partition '" + partition + "' (partitions: " + partitions + ")");
    }
  }

  /**
   * Fails naming the position of an empty or not well-formed key ({@code INVALID_ARGUMENT}), a key
   * given twice, the partition, or every key of {@code keys} it does not hold.
   */
  static void requireKeys(TqClient tq, String partition, List<String> keys) {
    Strings.checkNames(keys, "key");
    Set<String> seen = new HashSet<>();
    for (String key : keys) {
      if (!seen.add(key)) {
        throw new TqException(ErrorCode.DUPLICATE_KEY, "key '" + key + "' is given more than once");
      }
    }
    requirePartition(tq, partition);
    Map<String, Map<String, Object>> present =
        tq.kv().list(partition).getOrDefault(partition, Map.of());
    List<String> missing = keys.stream().filter(k -> !present.containsKey(k)).distinct().toList();
    if (!missing.isEmpty()) {
      throw new TqException(
          ErrorCode.UNKNOWN_KEY, "keys not found in partition '" + partition + "': " + missing);
    }
  }

  /** A tensor read back: its dtype, shape and elements as nested lists. */
  record TensorValue(DType dtype, long[] shape, Object data) {
    /** The JSON form {@code {"dtype": ..., "shape": [...], "data": ...}}. */
    Map<String, Object> toJson() {
      Map<String, Object> value = new LinkedHashMap<>();
      value.put("dtype", dtype.torchName());
      value.put("shape", Arrays.stream(shape).boxed().toList());
      value.put("data", data);
      return value;
    }

    /** The table form {@code int64[2x3] [[1,2,3],[4,5,6]]}. */
    String describe() {
      return dtype.torchName()
          + Arrays.stream(shape)
              .mapToObj(Long::toString)
              .collect(Collectors.joining("x", "[", "] "))
          + JsonWriter.COMPACT.write(data);
    }
  }

  /**
   * The value of row {@code i} of a column, read while the batch is open: every tensor, at the top
   * or nested in the lists and maps of an object value, as a {@link TensorValue}.
   */
  static Object cell(Column column, int i) {
    return switch (column) {
      case DenseColumn dense -> tensorValue(dense.row(i));
      case JaggedColumn jagged -> tensorValue(jagged.row(i));
      case ObjectColumn objects -> readTensors(objects.get(i));
    };
  }

  /** {@code value} with its tensors, however deeply nested, replaced by their values. */
  private static Object readTensors(Object value) {
    return switch (value) {
      case Tensor t -> tensorValue(t);
      case List<?> list -> list.stream().map(KvCommand::readTensors).toList();
      case Map<?, ?> map -> mapValues(map, KvCommand::readTensors);
      case null, default -> value;
    };
  }

  /** The JSON form of a cell: every {@link TensorValue} in it as {@link TensorValue#toJson}. */
  static Object toJson(Object cell) {
    return switch (cell) {
      case TensorValue t -> t.toJson();
      case List<?> list -> list.stream().map(KvCommand::toJson).toList();
      case Map<?, ?> map -> mapValues(map, KvCommand::toJson);
      case null, default -> cell;
    };
  }

  /** A copy of {@code map} in its order, with {@code f} applied to each value (null allowed). */
  private static Map<Object, Object> mapValues(Map<?, ?> map, UnaryOperator<Object> f) {
    Map<Object, Object> out = new LinkedHashMap<>();
    map.forEach((k, v) -> out.put(k, f.apply(v)));
    return out;
  }

  /** The table form of a cell: a top-level tensor as {@link TensorValue#describe}. */
  static String describe(Object cell) {
    return cell instanceof TensorValue t ? t.describe() : JsonWriter.COMPACT.write(toJson(cell));
  }

  static TensorValue tensorValue(Tensor tensor) {
    long[] shape = tensor.shape();
    long[] next = {0};
    return new TensorValue(tensor.dtype(), shape, nested(tensor, shape, 0, next));
  }

  private static Object nested(Tensor tensor, long[] shape, int depth, long[] next) {
    if (depth == shape.length) {
      long i = next[0]++;
      DType dtype = tensor.dtype();
      if (dtype == DType.BOOL) {
        return tensor.getBoolean(i);
      }
      if (dtype == DType.FLOAT64) {
        return tensor.getDouble(i);
      }
      if (dtype.isFloatingPoint()) {
        return tensor.getFloat(i);
      }
      return tensor.getLong(i);
    }
    List<Object> list = new ArrayList<>();
    for (long j = 0; j < shape[depth]; j++) {
      list.add(nested(tensor, shape, depth + 1, next));
    }
    return list;
  }
}
