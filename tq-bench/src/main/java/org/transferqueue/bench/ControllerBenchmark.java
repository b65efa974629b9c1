package org.transferqueue.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.tensor.DType;

/**
 * Controller hot paths: a fetch of 1024 samples x 16 fields from partitions of 10k and 1M samples
 * (the cost must not grow with the partition: compare the two {@code fetch} scores), and production
 * notifications of 1024 x 16 cells (throughput in cells per second).
 *
 * <pre>
 * java -jar tq-bench/target/tq-benchmarks.jar ControllerBenchmark -f 1 -wi 2 -i 3
 * </pre>
 */
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class ControllerBenchmark {
  static final int BATCH = 1024;
  static final int FIELD_COUNT = 16;
  static final List<String> FIELDS = fieldNames();
  static final FieldSchema SCHEMA =
      new FieldSchema(DType.FLOAT32, FieldSchema.shapeOf(128), false, false, null);

  static List<String> fieldNames() {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < FIELD_COUNT; i++) {
      names.add("field_" + i);
    }
    return List.copyOf(names);
  }

  static Map<String, FieldSchema> schema() {
    Map<String, FieldSchema> schema = new LinkedHashMap<>();
    for (String f : FIELDS) {
      schema.put(f, SCHEMA);
    }
    return schema;
  }

  static void produceAll(Controller controller, String partition, long from, long to) {
    for (long start = from; start < to; start += 65_536) {
      List<Long> chunk = LongStream.range(start, Math.min(to, start + 65_536)).boxed().toList();
      controller.updateProductionStatus(ProductionUpdate.of(partition, chunk, schema()));
    }
  }

  /** A partition of {@code partitionSize} samples, every field produced. */
  @State(Scope.Thread)
  public static class FetchState {
    @Param({"10000", "1000000"})
    int partitionSize;

    Controller controller;
    int remaining;
    GetMetadataRequest request;

    @Setup(Level.Trial)
    public void setUp() {
      controller = new Controller(ControllerOptions.defaults());
      controller.getMetadata(GetMetadataRequest.insert("p", FIELDS, partitionSize));
      produceAll(controller, "p", 0, partitionSize);
      request = GetMetadataRequest.fetch("p", FIELDS, "actor", BATCH);
      remaining = partitionSize;
    }

    /** Makes the consumed samples ready again once fewer than a batch remain (not timed). */
    @Setup(Level.Invocation)
    public void refill() {
      if (remaining < BATCH) {
        controller.resetConsumption("p", "actor");
        remaining = partitionSize;
      }
      remaining -= BATCH;
    }
  }

  /** A partition whose samples are inserted but not yet produced, notified batch by batch. */
  @State(Scope.Thread)
  public static class NotifyState {
    static final int WINDOW = 64 * BATCH;

    Controller controller;
    List<List<Long>> batches;
    Map<String, FieldSchema> schema = schema();
    int next;

    @Setup(Level.Trial)
    public void setUp() {
      controller = new Controller(ControllerOptions.defaults());
      fill();
    }

    private void fill() {
      BatchMeta slots = controller.getMetadata(GetMetadataRequest.insert("p", FIELDS, WINDOW));
      batches = new ArrayList<>();
      for (int i = 0; i < WINDOW; i += BATCH) {
        batches.add(slots.globalIndexes().subList(i, i + BATCH));
      }
      // a consumer's ready set exists, as in a running pipeline
      controller.scanReady("p", FIELDS, "actor");
      next = 0;
    }

    /** Clears the produced window and inserts a fresh one when it is used up (not timed). */
    @Setup(Level.Invocation)
    public void refill() {
      if (next == batches.size()) {
        List<Long> all = batches.stream().flatMap(List::stream).toList();
        controller.clearSamples(ClearSamplesRequest.of("p", all));
        fill();
      }
    }
  }

  /**
   * One fetch of 1024 samples with 16 fields.
   *
   * @param state the partition
   * @return the batch metadata
   */
  @Benchmark
  @BenchmarkMode(Mode.AverageTime)
  @OutputTimeUnit(TimeUnit.MICROSECONDS)
  public BatchMeta fetch(FetchState state) {
    return state.controller.getMetadata(state.request);
  }

  /**
   * One production notification of 1024 samples x 16 fields; the score is in cells per second.
   *
   * @param state the partition
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(BATCH * FIELD_COUNT)
  public void notifyProduction(NotifyState state) {
    state.controller.updateProductionStatus(
        ProductionUpdate.of("p", state.batches.get(state.next++), state.schema));
  }
}
