package org.transferqueue.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.ThreadParams;
import org.transferqueue.Clock;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.Controller;
import org.transferqueue.controller.ControllerOptions;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.SyncPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.tensor.DType;

/**
 * Controller operations per second with a journal ({@code fsync}: every group commit synced; {@code
 * interval}: synced every 10 ms) against none, measured in the same run so that the ratio {@code
 * journal / none} is the figure. One operation is one controller call of a producer and consumer
 * cycle on 8 samples and 2 fields: insert, production update, fetch, mark and clear (5 calls, every
 * one of them a journaled change). With 8 threads, each on its own partition, concurrent callers
 * share group commits: compare {@code cycle8Threads} with {@code cycle}.
 *
 * <pre>
 * java -jar tq-bench/target/tq-benchmarks.jar ControllerJournalBenchmark -f 1 -wi 2 -i 3
 * </pre>
 *
 * The journal directory is a temporary directory under {@code java.io.tmpdir} ({@code
 * -Djava.io.tmpdir=...} picks the disk to measure).
 */
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 2)
public class ControllerJournalBenchmark {
  static final int SAMPLES = 8;
  static final List<String> FIELDS = List.of("tokens", "reward");
  static final FieldSchema SCHEMA = FieldSchema.regular(DType.INT64, 256);

  /** One controller, journaling or not, shared by the benchmark's threads. */
  @State(Scope.Benchmark)
  public static class ControllerState {
    @Param({"none", "fsync", "interval"})
    String durability;

    Controller controller;
    Path directory;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
      ControllerOptions options = ControllerOptions.builder().pollingMode(true).build();
      if (durability.equals("none")) {
        controller = new Controller(options);
        return;
      }
      directory = Files.createTempDirectory("tq-controller-journal-bench");
      controller =
          Controller.recover(
              options,
              new SequentialSampler(),
              Clock.SYSTEM,
              JournalSettings.builder(directory.resolve("controller"))
                  .sync(SyncPolicy.fromName(durability))
                  .build());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
      controller.close();
      if (directory != null) {
        try (Stream<Path> walk = Files.walk(directory)) {
          for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
            Files.deleteIfExists(p);
          }
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
  }

  /** The partition of one benchmark thread. */
  @State(Scope.Thread)
  public static class Producer {
    String partition;

    @Setup(Level.Trial)
    public void setUp(ThreadParams thread) {
      partition = "p" + thread.getThreadIndex();
    }
  }

  /**
   * One producer and consumer cycle: 5 controller calls.
   *
   * @param state the controller
   * @param producer this thread's partition
   * @return the fetched batch
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(5)
  public BatchMeta cycle(ControllerState state, Producer producer) {
    return run(state.controller, producer.partition);
  }

  /**
   * The same cycle on 8 threads at once, each on its own partition.
   *
   * @param state the controller
   * @param producer this thread's partition
   * @return the fetched batch
   */
  @Benchmark
  @BenchmarkMode(Mode.Throughput)
  @OutputTimeUnit(TimeUnit.SECONDS)
  @OperationsPerInvocation(5)
  @Threads(8)
  public BatchMeta cycle8Threads(ControllerState state, Producer producer) {
    return run(state.controller, producer.partition);
  }

  static BatchMeta run(Controller controller, String partition) {
    BatchMeta slots = controller.getMetadata(GetMetadataRequest.insert(partition, FIELDS, SAMPLES));
    controller.updateProductionStatus(
        new ProductionUpdate(
            partition,
            slots.globalIndexes(),
            java.util.Map.of("tokens", SCHEMA, "reward", SCHEMA),
            java.util.Map.of(),
            boxed(slots.generationArray())));
    BatchMeta batch =
        controller.getMetadata(GetMetadataRequest.fetch(partition, FIELDS, "actor", SAMPLES));
    ClearSamplesRequest clear = ClearSamplesRequest.of(batch, true);
    controller.markClearing(clear);
    controller.clearSamples(clear);
    return batch;
  }

  private static List<Long> boxed(long[] values) {
    Long[] out = new Long[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = values[i];
    }
    return List.of(out);
  }
}
