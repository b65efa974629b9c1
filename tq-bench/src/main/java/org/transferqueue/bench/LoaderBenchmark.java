package org.transferqueue.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.MicroBatch;
import org.transferqueue.client.StreamingLoader;
import org.transferqueue.client.Termination;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.RankAwareSampler;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.Tensor;

/**
 * {@link StreamingLoader} throughput against a plain fetch loop doing the same reads, on the
 * embedded system, measured in the same run.
 *
 * <p>The partition holds {@value #SAMPLES} samples of one float32 field of 64 KiB each, written
 * once per trial. Each operation consumes the whole partition with four ranks on four threads: two
 * data-parallel groups of two replicas, batch size {@value #BATCH}, micro-batch size {@value
 * #MICRO}, {@link RankAwareSampler}. Every operation uses a fresh task name, so consumption starts
 * from zero and the sampler cache starts empty without re-writing the data; the timed part is only
 * the consumption. {@code loader} drains one {@link StreamingLoader} per rank (prefetch 2, two
 * fetch workers, until consumed); {@code fetchLoop} issues the same metadata requests ({@code
 * dp_rank}, {@code batch_index} = 0, 1, ...) and one {@code getData} per micro-batch slice, one
 * batch at a time, and stops at the first empty answer once the task has consumed the partition.
 *
 * <p>Each operation delivers 2 replicas x 512 / 8 = {@value #MICRO_BATCHES} micro-batches, so the
 * score is micro-batches per second; GB/s = score x 8 x 65536 bytes / 10^9.
 *
 * <pre>
 * java --enable-native-access=ALL-UNNAMED -jar tq-bench/target/tq-benchmarks.jar \
 *     LoaderBenchmark -f 1 -wi 2 -i 3
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 3, time = 2)
public class LoaderBenchmark {
  private static final int SAMPLES = 512;
  private static final int ELEMENTS = 16384;
  private static final int BATCH = 32;
  private static final int MICRO = 8;
  private static final int MICRO_BATCHES = 2 * SAMPLES / MICRO;
  private static final int[] RANKS = {0, 0, 1, 1};
  private static final String PARTITION = "train";
  private static final String FIELD = "obs";

  private TransferQueueSystem tq;
  private ExecutorService threads;
  private int tasks;

  /** Starts the system and writes the partition. */
  @Setup(Level.Trial)
  public void setUp() {
    tq =
        TransferQueueSystem.builder()
            .config(
                TqConfig.builder()
                    .controller(c -> c.pollingMode(true))
                    .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(2)))
                    .memory(m -> m.limitBytes(1L << 30))
                    .build())
            .sampler(new RankAwareSampler())
            .start();
    for (int start = 0; start < SAMPLES; start += 128) {
      try (Batch batch =
          Batch.builder()
              .dense(FIELD, filled(Tensor.allocate(tq.allocator(), DType.FLOAT32, 128, ELEMENTS)))
              .build()) {
        tq.client().put(batch, PARTITION);
      }
    }
    threads = Executors.newFixedThreadPool(RANKS.length);
  }

  private static Tensor filled(Tensor tensor) {
    tensor.segment().fill((byte) 1);
    return tensor;
  }

  /** Stops the threads and the system. */
  @TearDown(Level.Trial)
  public void tearDown() {
    threads.close();
    tq.close();
  }

  /**
   * Consumes the partition with one streaming loader per rank.
   *
   * @param bh sink for the delivered rows
   * @throws Exception if a rank fails
   */
  @Benchmark
  @OperationsPerInvocation(MICRO_BATCHES)
  public void loader(Blackhole bh) throws Exception {
    String task = "task_" + tasks++;
    runRanks(
        rank -> {
          int count = 0;
          try (StreamingLoader loader =
              StreamingLoader.builder(tq.client())
                  .partition(PARTITION)
                  .task(task)
                  .fields(FIELD)
                  .batchSize(BATCH)
                  .microBatchSize(MICRO)
                  .dpRank(rank)
                  .termination(Termination.UNTIL_CONSUMED)
                  .prefetch(2)
                  .fetchWorkers(2)
                  .pollInterval(Duration.ofMillis(1))
                  .build()) {
            for (MicroBatch mb : loader) {
              bh.consume(mb.batch().rowCount());
              count++;
            }
          }
          return count;
        });
  }

  /**
   * Consumes the partition with a plain metadata-fetch and read loop per rank.
   *
   * @param bh sink for the read rows
   * @throws Exception if a rank fails
   */
  @Benchmark
  @OperationsPerInvocation(MICRO_BATCHES)
  public void fetchLoop(Blackhole bh) throws Exception {
    String task = "task_" + tasks++;
    MetaClient client = tq.client();
    runRanks(
        rank -> {
          int count = 0;
          for (int index = 0; ; index++) {
            boolean consumed = client.checkConsumptionStatus(PARTITION, task);
            BatchMeta meta =
                client.getMeta(
                    new GetMetadataRequest(
                        FetchMode.FETCH,
                        PARTITION,
                        List.of(FIELD),
                        task,
                        BATCH,
                        new SamplingConfig(rank, index, Map.of()),
                        Duration.ZERO));
            if (meta.isEmpty()) {
              if (consumed) {
                return count;
              }
              index--; // nothing ready yet for this index: ask again
              continue;
            }
            for (int start = 0; start < meta.size(); start += MICRO) {
              int[] positions = new int[Math.min(MICRO, meta.size() - start)];
              for (int i = 0; i < positions.length; i++) {
                positions[i] = start + i;
              }
              try (Batch data = client.getData(meta.selectSamples(positions))) {
                bh.consume(data.rowCount());
              }
              count++;
            }
          }
        });
  }

  /** What one rank does; returns the micro-batches it received. */
  private interface Rank {
    int run(int dpRank) throws Exception;
  }

  private void runRanks(Rank body) throws InterruptedException, ExecutionException {
    List<Future<Integer>> runs = new ArrayList<>();
    for (int rank : RANKS) {
      runs.add(threads.submit(() -> body.run(rank)));
    }
    int total = 0;
    for (Future<Integer> run : runs) {
      total += run.get();
    }
    if (total != MICRO_BATCHES) {
      throw new IllegalStateException("micro-batches=" + total + " != expected=" + MICRO_BATCHES);
    }
  }
}
