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
import org.openjdk.jmh.annotations.AuxCounters;
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
 * <p>The partition holds {@value #SAMPLES} samples of one float32 field of 64 KiB each (128 MiB).
 * Each operation consumes the whole partition with four ranks on four threads: two data-parallel
 * groups of two replicas, batch size {@value #BATCH}, micro-batch size {@value #MICRO}, {@link
 * RankAwareSampler}. Every operation uses a fresh task name, so consumption starts from zero and
 * the sampler cache starts empty without re-writing the data; the timed part is only the
 * consumption. {@code loader} drains one {@link StreamingLoader} per rank (prefetch {@code
 * prefetch}, {@code fetchWorkers} fetch workers, until consumed); {@code fetchLoop} issues the same
 * metadata requests ({@code dp_rank}, {@code batch_index} = 0, 1, ...) and one {@code getData} per
 * micro-batch slice, one batch at a time, and stops at the first empty answer once the task has
 * consumed the partition.
 *
 * <p>Stability: an operation is {@value #MICRO_BATCHES} micro-batches (tens of milliseconds, so the
 * per-pass start and end of the loaders are amortised); the trial setup runs {@value
 * #WARMUP_PASSES} untimed passes of both loops, so the JIT is warm whatever warm-up time the runner
 * gives; every iteration starts from a rewritten partition, so the consumption state and sampler
 * cache entries of earlier tasks do not accumulate. On a machine shared with other processes the
 * two separate benchmarks still run at different moments, so {@code interleaved} runs one pass of
 * each back to back in every invocation (alternating the order) and reports the time of each as
 * secondary results: {@code fetchLoopNanos / loaderNanos} is the same-moment ratio that {@code
 * Figures} prints with its range over the iterations.
 *
 * <p>Each operation of {@code loader} or {@code fetchLoop} delivers 2 replicas x {@value #SAMPLES}
 * / {@value #MICRO} = {@value #MICRO_BATCHES} micro-batches, so the score is micro-batches per
 * second; GB/s = score x 8 x 65536 bytes / 10^9.
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
  private static final int SAMPLES = 2048;
  private static final int ELEMENTS = 16384;
  private static final int BATCH = 32;
  private static final int MICRO = 8;
  private static final int MICRO_BATCHES = 2 * SAMPLES / MICRO;
  private static final int[] RANKS = {0, 0, 1, 1};
  private static final String PARTITION = "train";
  private static final String FIELD = "obs";

  /** Untimed passes of both loops at the start of a trial, so the JIT is warm in any runner. */
  private static final int WARMUP_PASSES = 20;

  /** Batches each rank's loader fetches ahead of its consumer. */
  @Param("2")
  public int prefetch;

  /**
   * Fetch workers per rank's loader: 1 keeps four fetching threads, as the fetch loop has; 2 puts
   * eight on the machine's cores.
   */
  @Param({"1", "2"})
  public int fetchWorkers;

  private TransferQueueSystem tq;
  private ExecutorService threads;
  private int tasks;

  /**
   * Starts the system, writes the partition and runs both loops untimed a few times.
   *
   * @throws Exception if a warm-up pass fails
   */
  @Setup(Level.Trial)
  public void setUp() throws Exception {
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
    write();
    threads = Executors.newFixedThreadPool(RANKS.length);
    Blackhole bh =
        new Blackhole(
            "Today's password is swordfish. I understand instantiating Blackholes directly is"
                + " dangerous.");
    for (int i = 0; i < WARMUP_PASSES; i++) {
      loader(bh);
      fetchLoop(bh);
    }
    bh.evaporate("Yes, I am Stephen Hawking, and know a thing or two about black holes.");
  }

  /**
   * Drops the consumption state of the finished tasks (and their sampler cache entries) by clearing
   * the partition and writing it again, so that no iteration pays for earlier ones.
   */
  @Setup(Level.Iteration)
  public void rewrite() {
    tq.client().clearPartition(PARTITION);
    write();
  }

  private void write() {
    for (int start = 0; start < SAMPLES; start += 128) {
      try (Batch batch =
          Batch.builder()
              .dense(FIELD, filled(Tensor.allocate(tq.allocator(), DType.FLOAT32, 128, ELEMENTS)))
              .build()) {
        tq.client().put(batch, PARTITION);
      }
    }
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
                  .prefetch(prefetch)
                  .fetchWorkers(fetchWorkers)
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

  /**
   * The time spent in each loop by {@link #interleaved}, reported as JMH secondary results ({@code
   * interleaved:loaderNanos}, {@code interleaved:fetchLoopNanos}), summed over the iteration.
   */
  @AuxCounters(AuxCounters.Type.EVENTS)
  @State(Scope.Thread)
  public static class PassTimes {
    /** Nanoseconds spent in loader passes. */
    public long loaderNanos;

    /** Nanoseconds spent in fetch-loop passes. */
    public long fetchLoopNanos;

    private boolean loaderFirst;

    /** Starts each iteration at zero. */
    @Setup(Level.Iteration)
    public void clear() {
      loaderNanos = 0;
      fetchLoopNanos = 0;
    }
  }

  /**
   * One loader pass and one fetch-loop pass back to back (alternating which goes first), each
   * timed: both see the same machine at nearly the same moment, so their ratio ({@code
   * fetchLoopNanos / loaderNanos}) is stable even when other processes share the cores.
   *
   * @param bh sink for the delivered rows
   * @param times where the two passes' times are summed
   * @throws Exception if a rank fails
   */
  @Benchmark
  @OperationsPerInvocation(2 * MICRO_BATCHES)
  public void interleaved(Blackhole bh, PassTimes times) throws Exception {
    times.loaderFirst = !times.loaderFirst;
    if (times.loaderFirst) {
      times.loaderNanos += timed(() -> loader(bh));
      times.fetchLoopNanos += timed(() -> fetchLoop(bh));
    } else {
      times.fetchLoopNanos += timed(() -> fetchLoop(bh));
      times.loaderNanos += timed(() -> loader(bh));
    }
  }

  /** One pass of a loop. */
  private interface Pass {
    void run() throws Exception;
  }

  private static long timed(Pass pass) throws Exception {
    long start = System.nanoTime();
    pass.run();
    return System.nanoTime() - start;
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
