package org.transferqueue.examples;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.MicroBatch;
import org.transferqueue.client.StreamingLoader;
import org.transferqueue.client.Termination;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.sampler.RankAwareSampler;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;

/**
 * US-6 "Streaming data loader": trainer workers of one data-parallel group read the same samples,
 * different groups read different samples, while generators are still writing.
 *
 * <p>Starts a system with the {@link RankAwareSampler}, polling mode and 2 storage units. Two
 * generator threads each put 20 samples one by one into {@code train} ({@code input_ids} 1x16
 * filled with {@code seq_id}, {@code meta_idx = [seq_id]}, {@code seq_id = i + rank * 10000}). Four
 * trainer threads with {@code dp_rank = [0, 0, 1, 1]} each build an infinite streaming loader
 * ({@code batch_size = micro_batch_size = 2}, field {@code meta_idx}, task {@code update_task}, 2
 * fetch workers, prefetch 2), consume 5 micro-batches and close it. In real runs set {@code
 * TQ_PRE_ALLOC_SAMPLE_NUM} to the global batch size.
 */
public final class StreamingLoaderExample {
  static final String PARTITION = "train";
  static final String TASK = "update_task";
  static final int GENERATORS = 2;
  static final int SAMPLES_PER_GENERATOR = 20;
  static final int[] TRAINER_DP_RANKS = {0, 0, 1, 1};
  static final int MICRO_BATCHES_PER_TRAINER = 5;

  private StreamingLoaderExample() {}

  /**
   * What the example observed.
   *
   * @param seenByTrainer per trainer (in {@link #TRAINER_DP_RANKS} order), the {@code meta_idx}
   *     values it read, in order
   * @param microBatchesByTrainer per trainer, the number of micro-batches it consumed
   */
  record Outcome(List<List<Long>> seenByTrainer, List<Integer> microBatchesByTrainer) {}

  /**
   * Runs the example.
   *
   * @param args ignored
   */
  public static void main(String[] args) {
    run(System.out);
  }

  /**
   * Runs the example, printing what each trainer read.
   *
   * @param out where to print
   * @return what the example observed
   */
  static Outcome run(PrintStream out) {
    out.println(
        "Starting TransferQueue: RankAwareSampler, polling mode, 2 storage units (embedded)");
    out.println("(In real runs set TQ_PRE_ALLOC_SAMPLE_NUM to the global batch size.)");
    TqConfig config =
        TqConfig.builder()
            .controller(c -> c.pollingMode(true))
            .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(2)))
            .build();
    try (TransferQueueSystem tq =
            TransferQueueSystem.builder()
                .config(config)
                .sampler(new RankAwareSampler())
                .leakPolicy(LeakPolicy.THROW)
                .start();
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> generators = new ArrayList<>();
      for (int rank = 0; rank < GENERATORS; rank++) {
        int generatorRank = rank;
        generators.add(threads.submit(() -> generate(tq.client(), tq.allocator(), generatorRank)));
      }
      List<Future<List<Long>>> trainers = new ArrayList<>();
      for (int dpRank : TRAINER_DP_RANKS) {
        trainers.add(threads.submit(() -> train(tq.client(), dpRank)));
      }
      List<List<Long>> seen = new ArrayList<>();
      List<Integer> counts = new ArrayList<>();
      for (int t = 0; t < trainers.size(); t++) {
        List<Long> values = await(trainers.get(t));
        seen.add(values);
        counts.add(values.size() / 2);
        out.println(
            "trainer " + t + " (dp_rank " + TRAINER_DP_RANKS[t] + ") read meta_idx " + values);
      }
      for (Future<?> generator : generators) {
        await(generator);
      }
      Map<Integer, List<Long>> byGroup = new TreeMap<>();
      for (int t = 0; t < seen.size(); t++) {
        byGroup.putIfAbsent(TRAINER_DP_RANKS[t], seen.get(t));
      }
      for (int t = 0; t < seen.size(); t++) {
        boolean same = byGroup.get(TRAINER_DP_RANKS[t]).equals(seen.get(t));
        out.println(
            "trainer "
                + t
                + (same ? ": same samples as its dp group" : ": DIFFERENT from its group"));
      }
      List<Long> group0 = byGroup.getOrDefault(0, List.of());
      List<Long> group1 = byGroup.getOrDefault(1, List.of());
      boolean disjoint = Collections.disjoint(group0, group1);
      out.println("dp groups 0 and 1 " + (disjoint ? "read disjoint samples" : "OVERLAP"));
      out.println("Closing TransferQueue");
      return new Outcome(seen, counts);
    }
  }

  /** Puts this generator's samples one by one. */
  private static Void generate(MetaClient client, BufferAllocator allocator, int rank) {
    for (int i = 0; i < SAMPLES_PER_GENERATOR; i++) {
      long seqId = i + rank * 10_000L;
      long[] inputIds = new long[16];
      Arrays.fill(inputIds, seqId);
      try (Batch sample =
          Batch.builder()
              .dense("input_ids", Tensor.ofLongs(allocator, DType.INT64, inputIds, 1, 16))
              .dense("meta_idx", Tensor.ofLongs(allocator, DType.INT64, new long[] {seqId}, 1, 1))
              .build()) {
        client.put(sample, PARTITION);
      }
    }
    return null;
  }

  /** Consumes {@link #MICRO_BATCHES_PER_TRAINER} micro-batches and returns the values read. */
  private static List<Long> train(MetaClient client, int dpRank) {
    List<Long> seen = new ArrayList<>();
    try (StreamingLoader loader =
        StreamingLoader.builder(client)
            .partition(PARTITION)
            .task(TASK)
            .fields("meta_idx")
            .batchSize(2)
            .microBatchSize(2)
            .dpRank(dpRank)
            .termination(Termination.INFINITE)
            .fetchWorkers(2)
            .prefetch(2)
            .pollInterval(Duration.ofMillis(10))
            .build()) {
      int consumed = 0;
      for (MicroBatch microBatch : loader) {
        long[] values =
            ((DenseColumn) microBatch.batch().column("meta_idx")).tensor().toLongArray();
        for (long v : values) {
          seen.add(v);
        }
        if (++consumed == MICRO_BATCHES_PER_TRAINER) {
          break;
        }
      }
    }
    return seen;
  }

  private static <T> T await(Future<T> future) {
    try {
      return future.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new IllegalStateException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
