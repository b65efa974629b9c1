package org.transferqueue.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicReference;
import org.transferqueue.Clock;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.MicroBatch;
import org.transferqueue.client.StreamingLoader;
import org.transferqueue.client.Termination;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The {@code streaming} pipeline of {@code tq demo}: long-lived stage workers (rollout x2, ref x2,
 * actor x2, reward x2, update x1) pull ready micro-batches with finite streaming loaders, one per
 * worker, reused across steps with {@link StreamingLoader#step(String)}; the driver only puts the
 * prompts of a step, waits until every worker has drained it and clears the partition. Every value
 * a stage reads is checked against what its producer must have written (all values derive from
 * {@code sample_id}). The system must use the rank-aware sampler, polling mode and pre-allocation
 * of one step's samples. Not thread-safe: one driver thread calls {@link #runStep} and {@link
 * #close}.
 */
final class StreamingPipeline implements AutoCloseable {
  private static final Duration POLL = Duration.ofMillis(2);

  /** One stage: display name, worker count and the fields it reads. */
  private enum Stage {
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

    boolean reads(String field) {
      return Arrays.asList(inputs).contains(field);
    }
  }

  private final Clock clock = Clock.SYSTEM;
  private final MetaClient client;
  private final BufferAllocator allocator;
  private final int steps;
  private final int batchSize;
  private final int promptLen;
  private final int responseLen;
  private final List<StageProgress> progress = new ArrayList<>();
  private final CountDownLatch[] started;
  private final CountDownLatch[] drained;
  private final List<StreamingLoader> loaders = new CopyOnWriteArrayList<>();
  private final AtomicReference<String> mismatch;
  private final AtomicReference<RuntimeException> failure = new AtomicReference<>();
  private volatile boolean aborted;

  /**
   * Starts the stage workers on {@code workers}; they wait for the first {@link #runStep}.
   *
   * @param mismatch receives the first verification failure
   */
  StreamingPipeline(
      MetaClient client,
      BufferAllocator allocator,
      ExecutorService workers,
      int steps,
      int batchSize,
      int microBatchSize,
      int promptLen,
      int responseLen,
      AtomicReference<String> mismatch) {
    this.client = client;
    this.allocator = allocator;
    this.steps = steps;
    this.batchSize = batchSize;
    this.promptLen = promptLen;
    this.responseLen = responseLen;
    this.mismatch = mismatch;
    int totalWorkers = Arrays.stream(Stage.values()).mapToInt(s -> s.workers).sum();
    started = new CountDownLatch[steps];
    drained = new CountDownLatch[steps];
    for (int step = 0; step < steps; step++) {
      started[step] = new CountDownLatch(1);
      drained[step] = new CountDownLatch(totalWorkers);
    }
    for (Stage stage : Stage.values()) {
      StageProgress stageProgress = new StageProgress(stage.label);
      progress.add(stageProgress);
      for (int worker = 0; worker < stage.workers; worker++) {
        StreamingLoader loader =
            StreamingLoader.builder(client)
                .partition(partition(0))
                .task("relax_" + stage.label)
                .fields(stage.inputs)
                .batchSize(microBatchSize)
                .microBatchSize(microBatchSize)
                .dpRank(worker)
                .termination(Termination.UNTIL_CONSUMED)
                .pollInterval(POLL)
                .build();
        loaders.add(loader);
        workers.execute(() -> work(stage, stageProgress, loader));
      }
    }
  }

  /** The stages' counters, in pipeline order. */
  List<StageProgress> stages() {
    return progress;
  }

  static String partition(int step) {
    return "relax_demo_" + step;
  }

  /**
   * Runs one step: puts the prompts, lets the workers drain the partition, clears it.
   *
   * @throws RuntimeException the failure of a stage worker
   */
  void runStep(int step) {
    progress.forEach(s -> s.startStep(batchSize));
    putPrompts(step);
    started[step].countDown();
    try {
      drained[step].await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for the stages", e);
    }
    if (failure.get() != null) {
      throw failure.get();
    }
    for (StageProgress stage : progress) {
      if (stage.stepSamples != batchSize) {
        mismatch.compareAndSet(
            null,
            stage.name
                + " processed "
                + stage.stepSamples
                + " of "
                + batchSize
                + " samples in step "
                + step);
      }
    }
    client.clearPartition(partition(step));
  }

  /** Releases workers still waiting for a step and closes every loader. */
  @Override
  public void close() {
    aborted = true;
    for (CountDownLatch latch : started) {
      latch.countDown();
    }
    loaders.forEach(StreamingLoader::close);
  }

  private void work(Stage stage, StageProgress stageProgress, StreamingLoader loader) {
    int step = 0;
    try (loader) {
      for (; step < steps; step++) {
        started[step].await();
        if (aborted) {
          return;
        }
        loader.step(partition(step));
        for (MicroBatch microBatch : loader) {
          long begin = clock.nanoTime();
          long bytes = process(stage, microBatch, step);
          stageProgress.record(microBatch.meta().size(), bytes, clock.nanoTime() - begin);
        }
        drained[step].countDown();
      }
    } catch (RuntimeException | InterruptedException e) {
      failure.compareAndSet(
          null, e instanceof RuntimeException r ? r : new IllegalStateException(e));
      // Ends the other workers' iterations, which may wait for this one's outputs.
      loaders.forEach(StreamingLoader::close);
      for (; step < steps; step++) {
        drained[step].countDown();
      }
    }
  }

  private void putPrompts(int step) {
    long[] ids = new long[batchSize];
    long[] prompts = new long[batchSize * promptLen];
    for (int r = 0; r < batchSize; r++) {
      ids[r] = (long) step * batchSize + r;
      System.arraycopy(tokens(ids[r], 7919, promptLen), 0, prompts, r * promptLen, promptLen);
    }
    try (Batch batch =
        Batch.builder()
            .dense("sample_id", Tensor.ofLongs(allocator, DType.INT64, ids, batchSize, 1))
            .dense(
                "prompt_ids", Tensor.ofLongs(allocator, DType.INT64, prompts, batchSize, promptLen))
            .build()) {
      client.put(batch, partition(step));
    }
  }

  /** Token ids of one sample, derived from its id. */
  private static long[] tokens(long sampleId, long salt, int length) {
    long[] row = new long[length];
    for (int j = 0; j < length; j++) {
      row[j] = (sampleId * salt + j * 104_729L) % 32_000;
    }
    return row;
  }

  private long[] prompt(long sampleId) {
    return tokens(sampleId, 7919, promptLen);
  }

  private long[] response(long sampleId) {
    return tokens(sampleId, 6151, responseLen);
  }

  private static float refLogProb(long sampleId) {
    return -0.01f * sampleId;
  }

  private static float oldLogProb(long sampleId) {
    return -0.02f * sampleId;
  }

  private static float advantage(long sampleId) {
    return sampleId % 2 == 0 ? 1f : -1f;
  }

  /** Verifies one micro-batch's inputs and writes the stage's outputs; returns bytes moved. */
  private long process(Stage stage, MicroBatch microBatch, int step) {
    Batch in = microBatch.batch();
    long[] ids = longs(in, "sample_id");
    int n = ids.length;
    long[] prompts = stage.reads("prompt_ids") ? longs(in, "prompt_ids") : null;
    long[] responses = stage.reads("response_ids") ? longs(in, "response_ids") : null;
    float[] old = stage == Stage.UPDATE ? floats(in, "old_log_prob") : null;
    float[] ref = stage == Stage.UPDATE ? floats(in, "ref_log_prob") : null;
    float[] adv = stage == Stage.UPDATE ? floats(in, "advantage") : null;
    for (int r = 0; r < n; r++) {
      long id = ids[r];
      String problem = null;
      if (id < (long) step * batchSize || id >= (long) (step + 1) * batchSize) {
        problem = "sample_id " + id + " outside step " + step;
      } else if (prompts != null && !Arrays.equals(row(prompts, r, promptLen), prompt(id))) {
        problem = "prompt_ids of sample " + id;
      } else if (responses != null
          && !Arrays.equals(row(responses, r, responseLen), response(id))) {
        problem = "response_ids of sample " + id;
      } else if (old != null
          && (old[r] != oldLogProb(id) || ref[r] != refLogProb(id) || adv[r] != advantage(id))) {
        problem = "log-probs or advantage of sample " + id;
      }
      if (problem != null) {
        mismatch.compareAndSet(null, stage.label + " read wrong " + problem);
      }
    }
    Batch.Builder out = Batch.builder();
    switch (stage) {
      case ROLLOUT -> {
        int width = promptLen + responseLen;
        long[] inputIds = new long[n * width];
        long[] responseIds = new long[n * responseLen];
        long[] mask = new long[n * responseLen];
        Arrays.fill(mask, 1);
        for (int r = 0; r < n; r++) {
          long[] response = response(ids[r]);
          System.arraycopy(prompt(ids[r]), 0, inputIds, r * width, promptLen);
          System.arraycopy(response, 0, inputIds, r * width + promptLen, responseLen);
          System.arraycopy(response, 0, responseIds, r * responseLen, responseLen);
        }
        out.dense("input_ids", Tensor.ofLongs(allocator, DType.INT64, inputIds, n, width))
            .dense(
                "response_ids", Tensor.ofLongs(allocator, DType.INT64, responseIds, n, responseLen))
            .dense("response_mask", Tensor.ofLongs(allocator, DType.INT64, mask, n, responseLen));
      }
      case REF -> out.dense("ref_log_prob", perSample(ids, StreamingPipeline::refLogProb));
      case ACTOR -> out.dense("old_log_prob", perSample(ids, StreamingPipeline::oldLogProb));
      case REWARD -> out.dense("advantage", perSample(ids, StreamingPipeline::advantage));
      case UPDATE ->
          out.dense(
              "loss", perSample(ids, id -> (oldLogProb(id) - refLogProb(id)) * advantage(id)));
    }
    try (Batch output = out.build()) {
      client.put(output, microBatch.meta());
      return DemoData.bytes(in) + DemoData.bytes(output);
    }
  }

  private interface PerSample {
    float value(long sampleId);
  }

  private Tensor perSample(long[] ids, PerSample f) {
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
}
