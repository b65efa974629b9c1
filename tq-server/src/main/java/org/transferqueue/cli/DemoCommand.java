package org.transferqueue.cli;

import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.transferqueue.Clock;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.RankAwareSampler;
import org.transferqueue.server.metrics.PrometheusEndpoint;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.JaggedColumn;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code tq demo}: an RL pipeline on the embedded system. With {@code --pipeline single-controller}
 * (the default) per iteration a rollout stage writes prompts and responses, a reward and a
 * reference stage consume them and write their results back, and a trainer consumes micro-batches
 * of everything; all four run concurrently. With {@code --pipeline streaming} the driver only puts
 * prompts and stage workers pull ready micro-batches with streaming loaders (see {@link
 * StreamingPipeline}). In both, every value read is checked against what must have been written.
 */
@Command(
    name = "demo",
    description =
        "Run an RL pipeline (rollout, reward, reference, trainer) on the embedded system.")
final class DemoCommand implements Callable<Integer> {
  private static final List<String> RESPONSE_FIELDS = List.of("sample_id", "response_ids");
  private static final List<String> TRAIN_FIELDS =
      List.of("sample_id", "prompt_ids", "response_ids", "messages", "rm_score", "ref_log_prob");
  private static final Duration FETCH_WAIT = Duration.ofSeconds(60);
  private static final String SINGLE_CONTROLLER = "single-controller";
  private static final String STREAMING = "streaming";

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--iterations",
      defaultValue = "4",
      description = "Training steps (default ${DEFAULT-VALUE}).")
  int iterations;

  @Option(
      names = "--batch-size",
      defaultValue = "512",
      description = "Samples per step (default ${DEFAULT-VALUE}).")
  int batchSize;

  @Option(
      names = "--micro-batch-size",
      defaultValue = "32",
      description = "Samples per fetch of each consuming stage (default ${DEFAULT-VALUE}).")
  int microBatchSize;

  @Option(
      names = "--seq-len",
      defaultValue = "4096",
      description =
          "Longest response in tokens; prompts are a quarter of it (default ${DEFAULT-VALUE}).")
  int seqLen;

  @Option(
      names = "--backend",
      defaultValue = "SimpleStorage",
      description = "Storage backend: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  String backend;

  @Option(
      names = "--units",
      defaultValue = "2",
      description = "SimpleStorage units (default ${DEFAULT-VALUE}).")
  int units;

  @Option(
      names = "--pipeline",
      defaultValue = SINGLE_CONTROLLER,
      description =
          "single-controller (a driver fetches for each stage) or streaming (stage workers pull"
              + " ready micro-batches with streaming loaders); default ${DEFAULT-VALUE}.")
  String pipeline;

  @Option(
      names = "--metrics-port",
      description =
          "Serve Prometheus metrics at http://127.0.0.1:<port>/metrics while the demo runs"
              + " (0 picks a free port; off when not given).")
  Integer metricsPort;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    if (iterations < 1 || batchSize < 1 || microBatchSize < 1 || seqLen < 4 || units < 1) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--iterations, --batch-size, --micro-batch-size and --units must be at least 1 and --seq-len at least 4");
    }
    if (metricsPort != null && (metricsPort < 0 || metricsPort > 65535)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), "--metrics-port: " + metricsPort + " is not in 0-65535");
    }
    if (!pipeline.equals(SINGLE_CONTROLLER) && !pipeline.equals(STREAMING)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--pipeline: unknown pipeline '"
              + pipeline
              + "'; one of ["
              + SINGLE_CONTROLLER
              + ", "
              + STREAMING
              + "]");
    }
    boolean streaming = pipeline.equals(STREAMING);
    TqConfig config =
        TqConfig.builder()
            .controller(
                c -> {
                  if (streaming) {
                    c.pollingMode(true).preallocSampleNum(batchSize);
                  }
                })
            .backend(
                b ->
                    b.storageBackend(backendNamed(backend))
                        .simpleStorage(s -> s.numDataStorageUnits(units)))
            .metrics(
                m -> m.enabled(metricsPort != null).port(metricsPort == null ? 0 : metricsPort))
            .build();
    out.printf(
        "tq demo (%s): %d iterations x %d samples, micro-batches of %d, responses up to %d tokens,"
            + " %s%n",
        pipeline, iterations, batchSize, microBatchSize, seqLen, backend);
    out.flush();
    StageProgress rollout = new StageProgress("rollout");
    StageProgress reward = new StageProgress("reward");
    StageProgress reference = new StageProgress("reference");
    StageProgress trainer = new StageProgress("trainer");
    List<StageProgress> stages = new ArrayList<>(List.of(rollout, reward, reference, trainer));
    AtomicReference<String> mismatch = new AtomicReference<>();
    long started = Clock.SYSTEM.nanoTime();
    boolean live = System.console() != null;
    TransferQueueSystem.Builder system = TransferQueueSystem.builder().config(config);
    if (streaming) {
      system.sampler(new RankAwareSampler());
    }
    if (metricsPort != null) {
      PrometheusEndpoint.install(system);
    }
    try (TransferQueueSystem tq = system.start();
        ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor();
        ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor()) {
      tq.metricsEndpoint()
          .ifPresent(address -> out.printf("metrics: http://%s/metrics%n", address));
      out.flush();
      MetaClient client = tq.client();
      BufferAllocator allocator = tq.allocator();
      if (streaming) {
        try (StreamingPipeline streamingPipeline =
            new StreamingPipeline(
                client,
                allocator,
                workers,
                iterations,
                batchSize,
                microBatchSize,
                Math.max(1, seqLen / 4),
                seqLen,
                mismatch)) {
          stages.clear();
          stages.addAll(streamingPipeline.stages());
          for (int step = 0; step < iterations && mismatch.get() == null; step++) {
            final int currentStep = step;
            var display =
                live
                    ? ticker.scheduleAtFixedRate(
                        () -> render(out, currentStep, stages, false),
                        0,
                        200,
                        TimeUnit.MILLISECONDS)
                    : null;
            try {
              streamingPipeline.runStep(step);
            } finally {
              if (display != null) {
                display.cancel(false);
              }
            }
            render(out, currentStep, stages, true);
          }
        }
      }
      for (int step = 0; !streaming && step < iterations && mismatch.get() == null; step++) {
        String partition = "train_" + step;
        DemoData data = new DemoData(step, Math.max(1, seqLen / 4), seqLen);
        stages.forEach(s -> s.startStep(batchSize));
        final int currentStep = step;
        var display =
            live
                ? ticker.scheduleAtFixedRate(
                    () -> render(out, currentStep, stages, false), 0, 200, TimeUnit.MILLISECONDS)
                : null;
        List<Future<?>> running = new ArrayList<>();
        running.add(workers.submit(() -> produce(client, allocator, data, partition, rollout)));
        running.add(
            workers.submit(
                () ->
                    derive(client, allocator, data, partition, "reward", true, reward, mismatch)));
        running.add(
            workers.submit(
                () ->
                    derive(
                        client,
                        allocator,
                        data,
                        partition,
                        "reference",
                        false,
                        reference,
                        mismatch)));
        running.add(workers.submit(() -> train(client, data, partition, trainer, mismatch)));
        awaitAll(running);
        if (display != null) {
          display.cancel(false);
        }
        render(out, currentStep, stages, true);
        client.clearPartition(partition);
      }
    }
    double seconds = (Clock.SYSTEM.nanoTime() - started) / 1e9;
    out.printf(
        "%n  %-10s %10s %14s %10s %14s %10s%n",
        "stage", "samples", "bytes", "busy s", "samples/s", "GB/s");
    for (StageProgress stage : stages) {
      out.println(stage.summaryRow());
    }
    out.printf("  wall time %.2f s%n", seconds);
    String failure = mismatch.get();
    if (failure != null) {
      out.println("verification FAILED: " + failure);
      out.flush();
      return 1;
    }
    long verified = stages.getLast().samples.get();
    long expected = (long) iterations * batchSize;
    if (verified != expected) {
      out.printf(
          "verification FAILED: the %s stage saw %d of %d samples%n",
          stages.getLast().name, verified, expected);
      out.flush();
      return 1;
    }
    out.printf("verified: all %d samples match%n", verified);
    out.flush();
    return 0;
  }

  private StorageBackend backendNamed(String name) {
    for (StorageBackend candidate : StorageBackend.values()) {
      if (candidate.configName().equalsIgnoreCase(name)) {
        return candidate;
      }
    }
    List<String> names = new ArrayList<>();
    for (StorageBackend candidate : StorageBackend.values()) {
      names.add(candidate.configName());
    }
    throw new CommandLine.ParameterException(
        spec.commandLine(), "--backend: unknown backend '" + name + "'; one of " + names);
  }

  private Void produce(
      MetaClient client,
      BufferAllocator allocator,
      DemoData data,
      String partition,
      StageProgress progress) {
    for (int first = 0; first < batchSize; first += microBatchSize) {
      int rows = Math.min(microBatchSize, batchSize - first);
      long begin = Clock.SYSTEM.nanoTime();
      try (Batch batch = data.rollout(allocator, first, rows)) {
        client.put(batch, partition);
        progress.record(rows, DemoData.bytes(batch), Clock.SYSTEM.nanoTime() - begin);
      }
    }
    return null;
  }

  private Void derive(
      MetaClient client,
      BufferAllocator allocator,
      DemoData data,
      String partition,
      String task,
      boolean rewardStage,
      StageProgress progress,
      AtomicReference<String> mismatch) {
    String field = rewardStage ? "rm_score" : "ref_log_prob";
    for (int done = 0; done < batchSize; ) {
      int rows = Math.min(microBatchSize, batchSize - done);
      long begin = Clock.SYSTEM.nanoTime();
      BatchMeta meta =
          client.getMeta(
              GetMetadataRequest.fetch(partition, RESPONSE_FIELDS, task, rows)
                  .withTimeout(FETCH_WAIT));
      try (Batch input = client.getData(meta)) {
        String problem = data.verifyResponses(input);
        if (problem != null) {
          mismatch.compareAndSet(null, task + " read " + problem);
        }
        JaggedColumn responses = (JaggedColumn) input.column("response_ids");
        try (Batch output =
            Batch.builder()
                .rowCount(input.rowCount())
                .add(field, DemoData.derive(allocator, responses, id -> id, rewardStage))
                .build()) {
          client.put(output, meta);
          progress.record(
              input.rowCount(),
              DemoData.bytes(input) + DemoData.bytes(output),
              Clock.SYSTEM.nanoTime() - begin);
        }
      }
      done += meta.size();
    }
    return null;
  }

  private Void train(
      MetaClient client,
      DemoData data,
      String partition,
      StageProgress progress,
      AtomicReference<String> mismatch) {
    for (int done = 0; done < batchSize; ) {
      int rows = Math.min(microBatchSize, batchSize - done);
      long begin = Clock.SYSTEM.nanoTime();
      BatchMeta meta =
          client.getMeta(
              GetMetadataRequest.fetch(partition, TRAIN_FIELDS, "trainer", rows)
                  .withTimeout(FETCH_WAIT));
      try (Batch batch = client.getData(meta)) {
        String problem = data.verifyAll(batch);
        if (problem != null) {
          mismatch.compareAndSet(null, "trainer read " + problem);
        } else {
          progress.record(batch.rowCount(), DemoData.bytes(batch), Clock.SYSTEM.nanoTime() - begin);
        }
      }
      done += meta.size();
    }
    return null;
  }

  private static void awaitAll(List<Future<?>> running) {
    Throwable failure = null;
    for (Future<?> future : running) {
      try {
        future.get();
      } catch (ExecutionException e) {
        failure = failure == null ? e.getCause() : failure;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        failure = failure == null ? e : failure;
      }
    }
    if (failure instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (failure != null) {
      throw new IllegalStateException("a demo stage failed: " + failure, failure);
    }
  }

  private void render(PrintWriter out, int step, List<StageProgress> stages, boolean done) {
    StringBuilder line = new StringBuilder(done ? "" : "\r");
    line.append(String.format("step %d/%d ", step + 1, iterations));
    for (StageProgress stage : stages) {
      line.append(' ').append(stage.bar(10));
    }
    synchronized (out) {
      if (done) {
        out.print("\r");
        out.println(line);
      } else {
        out.print(line);
      }
      out.flush();
    }
  }
}
