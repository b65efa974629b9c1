package org.transferqueue.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.remote.MetaCodec;
import org.transferqueue.tensor.DType;

/**
 * Metadata codec throughput: the msgpack encoding and decoding of a {@link BatchMeta}, the metadata
 * every fetch reply and every put carries over the wire.
 *
 * <p>The batch has {@code rows} samples, four fields (three dense tensors and one object field), a
 * per-sample tag map of two entries and one batch-level {@code extra_info} entry: the shape of a
 * GRPO micro-batch's metadata.
 *
 * <ul>
 *   <li>{@code encode}: {@link MetaCodec#encode(BatchMeta)} to a byte array.
 *   <li>{@code decode}: {@link MetaCodec#decodeBatchMeta(byte[])} of those bytes.
 * </ul>
 *
 * <p>The score is batches per second. The figure that matters is the ratio of two builds measured
 * on one quiet machine (the encoder is pure heap code, so its ratio to another codec of the same
 * bytes is what this benchmark tracks).
 *
 * <p>Run: {@code java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar
 * MetaCodecBenchmark -f 1 -wi 3 -i 5}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class MetaCodecBenchmark {
  /** Samples in the batch. */
  @Param({"32", "1024"})
  public int rows;

  private BatchMeta meta;
  private byte[] encoded;

  /** Builds the batch and its encoding. */
  @Setup(Level.Trial)
  public void setUp() {
    long[] indexes = new long[rows];
    long[] generations = new long[rows];
    List<Map<String, ?>> tags = new ArrayList<>(rows);
    for (int i = 0; i < rows; i++) {
      indexes[i] = 1000L + i;
      generations[i] = 1 + (i % 3);
      tags.add(Map.of("total_lengths", 512L + i, "status", "ok"));
    }
    meta =
        BatchMeta.builder()
            .globalIndexes(indexes)
            .generations(generations)
            .partitionId("train@step-17")
            .field("input_ids", FieldSchema.regular(DType.INT64, 512))
            .field("attention_mask", FieldSchema.regular(DType.INT64, 512))
            .field("old_log_prob", FieldSchema.regular(DType.FLOAT32, 512))
            .field("prompt", FieldSchema.nonTensorField())
            .allProduced()
            .tags(tags)
            .extraInfo(Map.of("global_step", 17L))
            .build();
    encoded = MetaCodec.encode(meta);
  }

  /**
   * Encodes the batch.
   *
   * @return the bytes
   */
  @Benchmark
  public byte[] encode() {
    return MetaCodec.encode(meta);
  }

  /**
   * Decodes the batch.
   *
   * @return the batch
   */
  @Benchmark
  public BatchMeta decode() {
    return MetaCodec.decodeBatchMeta(encoded);
  }
}
