package org.transferqueue.controller;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.LongStream;
import org.transferqueue.Clock;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.tensor.DType;

/** Shared builders for controller tests. */
final class Fixtures {
  static final FieldSchema F32_4 = regular(DType.FLOAT32, 4);

  private Fixtures() {}

  static Controller controller() {
    return controller(1, false);
  }

  static Controller controller(int preAlloc, boolean polling) {
    return new Controller(
        ControllerOptions.builder()
            .preallocSampleNum(preAlloc)
            .pollingMode(polling)
            .fetchTimeout(Duration.ofMillis(200))
            .build(),
        new SequentialSampler(),
        Clock.SYSTEM);
  }

  static FieldSchema regular(DType dtype, long... dims) {
    return new FieldSchema(dtype, FieldSchema.shapeOf(dims), false, false, null);
  }

  static FieldSchema nested(DType dtype, List<List<Long>> shapes) {
    return new FieldSchema(dtype, null, true, false, shapes);
  }

  static FieldSchema nonTensor() {
    return new FieldSchema(null, null, false, true, null);
  }

  static List<Long> shape(long... dims) {
    return FieldSchema.shapeOf(dims);
  }

  static List<Long> range(long from, long to) {
    return LongStream.range(from, to).boxed().toList();
  }

  static List<Long> ids(long... indexes) {
    return LongStream.of(indexes).boxed().toList();
  }

  static Map<String, FieldSchema> schema(FieldSchema entry, String... fields) {
    Map<String, FieldSchema> out = new LinkedHashMap<>();
    for (String f : fields) {
      out.put(f, entry);
    }
    return out;
  }

  static BatchMeta insert(Controller c, String partition, int n, String... fields) {
    return c.getMetadata(GetMetadataRequest.insert(partition, List.of(fields), n));
  }

  static void produce(Controller c, String partition, List<Long> indexes, String... fields) {
    c.updateProductionStatus(ProductionUpdate.of(partition, indexes, schema(F32_4, fields)));
  }

  static BatchMeta fetch(Controller c, String partition, String task, int n, String... fields) {
    return c.getMetadata(GetMetadataRequest.fetch(partition, List.of(fields), task, n));
  }

  /** Inserts n samples and produces them for the fields. */
  static BatchMeta insertProduced(Controller c, String partition, int n, String... fields) {
    BatchMeta meta = insert(c, partition, n, fields);
    produce(c, partition, meta.globalIndexes(), fields);
    return meta;
  }

  /** A partition object with indexes pre-allocated. */
  static Partition partition(String id, long... preAllocated) {
    Partition p = new Partition(id, 0);
    p.registerPreAllocated(LongStream.of(preAllocated).mapToInt(i -> (int) i).toArray());
    return p;
  }

  static void produce(Partition p, List<Long> indexes, Map<String, FieldSchema> schema) {
    p.updateProduction(indexes.stream().mapToInt(Long::intValue).toArray(), schema, Map.of());
  }

  static int[] ints(long... values) {
    return LongStream.of(values).mapToInt(v -> (int) v).toArray();
  }
}
