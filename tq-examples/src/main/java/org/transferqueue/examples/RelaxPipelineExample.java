package org.transferqueue.examples;

import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
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
 * US-9 "Data-centric streaming pipeline": no central dispatch; every stage pulls the micro-batches
 * whose inputs are ready and writes its outputs back for exactly those samples.
 *
 * <p>Starts a system with the {@link RankAwareSampler}, polling mode, 2 storage units and 8
 * pre-allocated indexes per partition (the global batch size). Long-lived stage workers (rollout
 * x2, ref x2, actor x2, reward x2, update x1) each build one finite streaming loader ({@code
 * batch_size = micro_batch_size = 2}, task {@code relax_<stage>}, {@code dp_rank} = worker id, one
 * fetch worker, the least the loader takes) and reuse it across steps with {@link
 * StreamingLoader#step(String)}. Per step the driver puts 8 prompts into {@code relax_demo_<step>},
 * waits until every worker has drained the step, syncs weights and clears the partition. Every
 * value a stage reads is checked against what its producer wrote; the values are derived from
 * {@code sample_id}.
 */
public final class RelaxPipelineExample {
  static final int STEPS = 3;
  static final int GLOBAL_BATCH = 8;
  static final int PROMPT_LEN = 24;
  static final int RESPONSE_LEN = 32;

  /** A pipeline stage: its name, worker count, the fields it reads and what it writes. */
  enum Stage {
    ROLLOUT("rollout", 2, "sample_id", "prompt_ids"),
    REF("ref", 2, "sample_id", "prompt_ids", "response_ids"),
    ACTOR("actor", 2, "sample_id", "prompt_ids", "response_ids"),
    REWARD("reward", 2, "sample_id", "response_ids"),
    UPDATE("update", 1, "sample_id", "old_log_prob", "ref_log_prob", "advantage");

    final String label;
    final int workers;
    final String[] inputs;

    Stage(String label, int workers, String... inputs) {
      this.label = label;
      this.workers = workers;
      this.inputs = inputs;
    }
  }

  private RelaxPipelineExample() {}

  /**
   * What the example observed.
   *
   * @param processed per stage label, per step, the sample ids the stage processed
   * @param mismatches values read that differ from what their producer wrote
   * @param partitionsAfterRun the partitions left after the last step
   */
  record Outcome(
      Map<String, List<List<Long>>> processed, int mismatches, List<String> partitionsAfterRun) {}

  /**
   * Runs the example.
   *
   * @param args ignored
   */
  public static void main(String[] args) {
    Outcome outcome = run(System.out);
    if (outcome.mismatches() > 0) {
      System.exit(1);
    }
  }

  static String partition(int step) {
    return "relax_demo_" + step;
  }

  /**
   * Runs the example, printing a per-step progress summary.
   *
   * @param out where to print
   * @return what the example observed
   */
  static Outcome run(PrintStream out) {
    out.println(
        "Starting TransferQueue: RankAwareSampler, polling mode, 2 storage units, "
            + "pre-allocation "
            + GLOBAL_BATCH
            + " (embedded)");
    TqConfig config =
        TqConfig.builder()
            .controller(c -> c.pollingMode(true).preallocSampleNum(GLOBAL_BATCH))
            .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(2)))
            .build();
    Map<String, List<List<Long>>> processed = new LinkedHashMap<>();
    for (Stage stage : Stage.values()) {
      List<List<Long>> perStep = new ArrayList<>();
      for (int step = 0; step < STEPS; step++) {
        perStep.add(Collections.synchronizedList(new ArrayList<>()));
      }
      processed.put(stage.label, perStep);
    }
    AtomicInteger mismatches = new AtomicInteger();
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    List<StreamingLoader> loaders = new CopyOnWriteArrayList<>();
    int totalWorkers = Arrays.stream(Stage.values()).mapToInt(s -> s.workers).sum();
    CountDownLatch[] started = new CountDownLatch[STEPS];
    CountDownLatch[] drained = new CountDownLatch[STEPS];
    for (int step = 0; step < STEPS; step++) {
      started[step] = new CountDownLatch(1);
      drained[step] = new CountDownLatch(totalWorkers);
    }
    try (TransferQueueSystem tq =
        TransferQueueSystem.builder()
            .config(config)
            .sampler(new RankAwareSampler())
            .leakPolicy(LeakPolicy.THROW)
            .start()) {
      MetaClient client = tq.client();
      BufferAllocator allocator = tq.allocator();
      try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
        for (Stage stage : Stage.values()) {
          for (int worker = 0; worker < stage.workers; worker++) {
            int dpRank = worker;
            threads.execute(
                () -> {
                  int step = 0;
                  try (StreamingLoader loader = loader(client, stage, dpRank)) {
                    loaders.add(loader);
                    for (; step < STEPS; step++) {
                      started[step].await();
                      if (failure.get() != null) {
                        return;
                      }
                      loader.step(partition(step));
                      for (MicroBatch microBatch : loader) {
                        List<Long> ids = process(stage, microBatch, client, allocator, mismatches);
                        processed.get(stage.label).get(step).addAll(ids);
                      }
                      drained[step].countDown();
                    }
                  } catch (RuntimeException | InterruptedException e) {
                    failure.compareAndSet(
                        null, e instanceof RuntimeException r ? r : new IllegalStateException(e));
                    // Ends the other workers' iterations, which may wait for this one's outputs.
                    loaders.forEach(StreamingLoader::close);
                    for (; step < STEPS; step++) {
                      drained[step].countDown();
                    }
                  }
                });
          }
        }
        for (int step = 0; step < STEPS; step++) {
          putPrompts(client, allocator, step);
          started[step].countDown();
          awaitLatch(drained[step]);
          if (failure.get() != null) {
            for (int later = step + 1; later < STEPS; later++) {
              started[later].countDown();
            }
            throw failure.get();
          }
          StringBuilder line = new StringBuilder("step " + step + ":");
          for (Stage stage : Stage.values()) {
            line.append(' ')
                .append(stage.label)
                .append(' ')
                .append(processed.get(stage.label).get(step).size())
                .append('/')
                .append(GLOBAL_BATCH);
          }
          out.println(line);
          out.println("step " + step + ": sync weights, clear " + partition(step));
          client.clearPartition(partition(step));
        }
      }
      List<String> left = client.getPartitionList();
      out.println(
          mismatches.get() == 0
              ? "verified: every value read matches what was written"
              : "MISMATCH: " + mismatches.get() + " values differ");
      out.println("Closing TransferQueue");
      return new Outcome(processed, mismatches.get(), left);
    }
  }

  private static StreamingLoader loader(MetaClient client, Stage stage, int dpRank) {
    return StreamingLoader.builder(client)
        .partition(partition(0))
        .task("relax_" + stage.label)
        .fields(stage.inputs)
        .batchSize(2)
        .microBatchSize(2)
        .dpRank(dpRank)
        .termination(Termination.UNTIL_CONSUMED)
        .fetchWorkers(1)
        .pollInterval(Duration.ofMillis(5))
        .build();
  }

  private static void putPrompts(MetaClient client, BufferAllocator allocator, int step) {
    long[] sampleIds = new long[GLOBAL_BATCH];
    long[] prompts = new long[GLOBAL_BATCH * PROMPT_LEN];
    for (int r = 0; r < GLOBAL_BATCH; r++) {
      sampleIds[r] = (long) step * GLOBAL_BATCH + r;
      System.arraycopy(promptIds(sampleIds[r]), 0, prompts, r * PROMPT_LEN, PROMPT_LEN);
    }
    try (Batch batch =
        Batch.builder()
            .dense("sample_id", Tensor.ofLongs(allocator, DType.INT64, sampleIds, GLOBAL_BATCH, 1))
            .dense(
                "prompt_ids",
                Tensor.ofLongs(allocator, DType.INT64, prompts, GLOBAL_BATCH, PROMPT_LEN))
            .build()) {
      client.put(batch, partition(step));
    }
  }

  /** The prompt of a sample: pseudo-random token ids derived from its id. */
  static long[] promptIds(long sampleId) {
    long[] row = new long[PROMPT_LEN];
    for (int j = 0; j < PROMPT_LEN; j++) {
      row[j] = (sampleId * 7919 + j * 104_729L) % 32_000;
    }
    return row;
  }

  /** The response the rollout generates for a sample. */
  static long[] responseIds(long sampleId) {
    long[] row = new long[RESPONSE_LEN];
    for (int j = 0; j < RESPONSE_LEN; j++) {
      row[j] = (sampleId * 6151 + j * 3571L) % 32_000;
    }
    return row;
  }

  static float refLogProb(long sampleId) {
    return -0.01f * sampleId;
  }

  static float oldLogProb(long sampleId) {
    return -0.02f * sampleId;
  }

  static float advantage(long sampleId) {
    return sampleId % 2 == 0 ? 1f : -1f;
  }

  /** Checks the inputs of one micro-batch, writes the stage's outputs; returns the sample ids. */
  private static List<Long> process(
      Stage stage,
      MicroBatch microBatch,
      MetaClient client,
      BufferAllocator allocator,
      AtomicInteger mismatches) {
    Batch in = microBatch.batch();
    long[] ids = longs(in, "sample_id");
    int n = ids.length;
    int bad = 0;
    for (int r = 0; r < n; r++) {
      long id = ids[r];
      if (Arrays.asList(stage.inputs).contains("prompt_ids")) {
        bad += differs(row(longs(in, "prompt_ids"), r, PROMPT_LEN), promptIds(id));
      }
      if (Arrays.asList(stage.inputs).contains("response_ids")) {
        bad += differs(row(longs(in, "response_ids"), r, RESPONSE_LEN), responseIds(id));
      }
      if (stage == Stage.UPDATE) {
        bad += floats(in, "old_log_prob")[r] == oldLogProb(id) ? 0 : 1;
        bad += floats(in, "ref_log_prob")[r] == refLogProb(id) ? 0 : 1;
        bad += floats(in, "advantage")[r] == advantage(id) ? 0 : 1;
      }
    }
    mismatches.addAndGet(bad);
    Batch.Builder out = Batch.builder();
    switch (stage) {
      case ROLLOUT -> {
        long[] inputIds = new long[n * (PROMPT_LEN + RESPONSE_LEN)];
        long[] responses = new long[n * RESPONSE_LEN];
        long[] mask = new long[n * RESPONSE_LEN];
        Arrays.fill(mask, 1);
        for (int r = 0; r < n; r++) {
          System.arraycopy(
              promptIds(ids[r]), 0, inputIds, r * (PROMPT_LEN + RESPONSE_LEN), PROMPT_LEN);
          System.arraycopy(
              responseIds(ids[r]),
              0,
              inputIds,
              r * (PROMPT_LEN + RESPONSE_LEN) + PROMPT_LEN,
              RESPONSE_LEN);
          System.arraycopy(responseIds(ids[r]), 0, responses, r * RESPONSE_LEN, RESPONSE_LEN);
        }
        out.dense(
                "input_ids",
                Tensor.ofLongs(allocator, DType.INT64, inputIds, n, PROMPT_LEN + RESPONSE_LEN))
            .dense(
                "response_ids", Tensor.ofLongs(allocator, DType.INT64, responses, n, RESPONSE_LEN))
            .dense("response_mask", Tensor.ofLongs(allocator, DType.INT64, mask, n, RESPONSE_LEN));
      }
      case REF ->
          out.dense("ref_log_prob", column(allocator, ids, RelaxPipelineExample::refLogProb));
      case ACTOR ->
          out.dense("old_log_prob", column(allocator, ids, RelaxPipelineExample::oldLogProb));
      case REWARD ->
          out.dense("advantage", column(allocator, ids, RelaxPipelineExample::advantage));
      case UPDATE ->
          out.dense(
              "loss",
              column(allocator, ids, id -> (oldLogProb(id) - refLogProb(id)) * advantage(id)));
    }
    try (Batch output = out.build()) {
      client.put(output, microBatch.meta());
    }
    List<Long> seen = new ArrayList<>(n);
    for (long id : ids) {
      seen.add(id);
    }
    return seen;
  }

  private interface PerSample {
    float value(long sampleId);
  }

  private static Tensor column(BufferAllocator allocator, long[] ids, PerSample f) {
    float[] values = new float[ids.length];
    for (int r = 0; r < ids.length; r++) {
      values[r] = f.value(ids[r]);
    }
    return Tensor.ofFloats(allocator, DType.FLOAT32, values, ids.length, 1);
  }

  private static long[] longs(Batch batch, String field) {
    return ((DenseColumn) batch.column(field)).tensor().toLongArray();
  }

  private static float[] floats(Batch batch, String field) {
    return ((DenseColumn) batch.column(field)).tensor().toFloatArray();
  }

  private static long[] row(long[] flat, int r, int width) {
    return Arrays.copyOfRange(flat, r * width, (r + 1) * width);
  }

  private static int differs(long[] read, long[] expected) {
    return Arrays.equals(read, expected) ? 0 : 1;
  }

  private static void awaitLatch(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the stages", e);
    }
  }
}
