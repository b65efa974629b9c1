package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.client.LoaderFixtures.ids;
import static org.transferqueue.client.LoaderFixtures.putIds;
import static org.transferqueue.client.LoaderFixtures.system;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.RankAwareSampler;
import org.transferqueue.sampler.SeqlenBalancedSampler;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Await;
import org.transferqueue.testing.Seeds;

@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StreamingLoaderTest {
  @Parameter Deployment deployment;

  private static final Duration FAST_POLL = Duration.ofMillis(5);

  private static StreamingLoader.Builder loader(MetaClient client, String partition, int dpRank) {
    return StreamingLoader.builder(client)
        .partition(partition)
        .task("update_task")
        .fields("meta_idx")
        .batchSize(2)
        .microBatchSize(2)
        .dpRank(dpRank)
        .pollInterval(FAST_POLL);
  }

  /** Drains a loader, checking that each micro-batch's metadata describes its rows; returns ids. */
  private static List<Long> drain(StreamingLoader loader, MetaClient client) {
    List<Long> seen = new ArrayList<>();
    for (MicroBatch mb : loader) {
      seen.addAll(checkAligned(mb));
    }
    return seen;
  }

  /** Asserts that row i of the micro-batch holds the value written for meta.globalIndex(i). */
  private static List<Long> checkAligned(MicroBatch mb) {
    List<Long> values = ids(mb.batch(), "meta_idx");
    assertThat(values).hasSize(mb.meta().size());
    return values;
  }

  @Test
  void E96_finiteLoadersOfTwoGroupsCoverEverySampleOnceAndTerminate() throws Exception {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 8)) {
      putIds(tq.client(), tq.allocator(), "relax_demo_0", LongStream.range(0, 8).toArray());
      List<List<Long>> perLoader = Collections.synchronizedList(new ArrayList<>());
      try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
        List<Future<?>> runs = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
          int dp = rank;
          runs.add(
              pool.submit(
                  () -> {
                    try (StreamingLoader l =
                        loader(tq.client(), "relax_demo_0", dp)
                            .task("relax_rollout")
                            .termination(Termination.UNTIL_CONSUMED)
                            .build()) {
                      perLoader.add(drain(l, tq.client()));
                    }
                    return null;
                  }));
        }
        for (Future<?> run : runs) {
          run.get();
        }
      }
      List<Long> all = new ArrayList<>();
      perLoader.forEach(all::addAll);
      assertThat(all).containsExactlyInAnyOrderElementsOf(LongStream.range(0, 8).boxed().toList());
    }
  }

  @Test
  void US6_E98_replicasOfOneGroupSeeIdenticalSamplesAndGroupsAreDisjoint() throws Exception {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1);
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> producers = new ArrayList<>();
      for (int rank = 0; rank < 2; rank++) {
        long base = rank * 10000L;
        producers.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 20; i++) {
                    putIds(tq.client(), tq.allocator(), "train", base + i);
                  }
                  return null;
                }));
      }
      int[] ranks = {0, 0, 1, 1};
      List<Future<List<Long>>> trainers = new ArrayList<>();
      for (int dp : ranks) {
        trainers.add(
            pool.submit(
                () -> {
                  List<Long> seen = new ArrayList<>();
                  try (StreamingLoader l =
                      loader(tq.client(), "train", dp).fetchWorkers(2).prefetch(2).build()) {
                    Iterator<MicroBatch> it = l.iterator();
                    for (int i = 0; i < 5; i++) {
                      seen.addAll(checkAligned(it.next()));
                    }
                  }
                  return seen;
                }));
      }
      for (Future<?> p : producers) {
        p.get();
      }
      List<Long> a = trainers.get(0).get();
      List<Long> b = trainers.get(1).get();
      List<Long> c = trainers.get(2).get();
      List<Long> d = trainers.get(3).get();
      assertThat(a).hasSize(10).doesNotHaveDuplicates().isEqualTo(b);
      assertThat(c).hasSize(10).doesNotHaveDuplicates().isEqualTo(d);
      assertThat(a).doesNotContainAnyElementsOf(c);
    }
  }

  @Test
  void E99_noSampleIsDeliveredTwiceWithSeveralFetchWorkers() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int round = 0; round < 6; round++) {
      int batch = 1 + random.nextInt(4);
      int micro = 1 + random.nextInt(batch);
      int batches = 1 + random.nextInt(6);
      int workers = 1 + random.nextInt(4);
      int prefetch = 1 + random.nextInt(3);
      boolean rankAware = random.nextBoolean();
      String what =
          "seed="
              + seed
              + " round="
              + round
              + " batch="
              + batch
              + " micro="
              + micro
              + " batches="
              + batches
              + " workers="
              + workers
              + " prefetch="
              + prefetch
              + " rankAware="
              + rankAware;
      try (TestSystem tq =
          system(deployment, rankAware ? new RankAwareSampler() : new SequentialSampler(), 1)) {
        long[] values = LongStream.range(100, 100 + (long) batch * batches).toArray();
        putIds(tq.client(), tq.allocator(), "p", values);
        List<Long> seen = new ArrayList<>();
        List<Integer> microSizes = new ArrayList<>();
        try (StreamingLoader l =
            loader(tq.client(), "p", 0)
                .batchSize(batch)
                .microBatchSize(micro)
                .fetchWorkers(workers)
                .prefetch(prefetch)
                .termination(Termination.UNTIL_CONSUMED)
                .build()) {
          for (MicroBatch mb : l) {
            microSizes.add(mb.meta().size());
            seen.addAll(checkAligned(mb));
          }
        }
        assertThat(seen)
            .as(what)
            .containsExactlyInAnyOrderElementsOf(LongStream.of(values).boxed().toList());
        assertThat(microSizes).as(what).allMatch(n -> n <= micro);
      }
    }
  }

  @Test
  void E94_microBatchMetadataMatchesDataWhenBatchIsNotAMultiple() {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1)) {
      BatchMeta written =
          putIds(
              tq.client(), tq.allocator(), "p", LongStream.range(0, 14).map(i -> i * 7).toArray());
      java.util.Map<Long, Long> valueOf = new java.util.HashMap<>();
      for (int i = 0; i < written.size(); i++) {
        valueOf.put(written.globalIndex(i), i * 7L);
      }
      List<Integer> sizes = new ArrayList<>();
      try (StreamingLoader l =
          loader(tq.client(), "p", 0)
              .batchSize(7)
              .microBatchSize(3)
              .termination(Termination.UNTIL_CONSUMED)
              .build()) {
        for (MicroBatch mb : l) {
          sizes.add(mb.meta().size());
          List<Long> values = ids(mb.batch(), "meta_idx");
          for (int i = 0; i < mb.meta().size(); i++) {
            assertThat(values.get(i)).isEqualTo(valueOf.get(mb.meta().globalIndex(i)));
          }
        }
      }
      assertThat(sizes).containsExactly(3, 3, 1, 3, 3, 1);
    }
  }

  @Test
  void E94_splitAlignsMetadataWithRows(BufferAllocator allocator) {
    BatchMeta meta =
        BatchMeta.builder().globalIndexes(10, 11, 12, 13, 14, 15, 16).partitionId("p").build();
    try (Batch batch =
        Batch.builder()
            .dense(
                "x", Tensor.ofLongs(allocator, DType.INT64, LongStream.range(10, 17).toArray(), 7))
            .build()) {
      List<MicroBatch> parts = MicroBatch.split(batch, meta, 3, allocator);
      try {
        assertThat(parts).hasSize(3);
        assertThat(parts.get(0).meta().globalIndexes()).containsExactly(10L, 11L, 12L);
        assertThat(parts.get(1).meta().globalIndexes()).containsExactly(13L, 14L, 15L);
        assertThat(parts.get(2).meta().globalIndexes()).containsExactly(16L);
        for (MicroBatch part : parts) {
          assertThat(ids(part.batch(), "x")).isEqualTo(part.meta().globalIndexes());
        }
      } finally {
        parts.forEach(MicroBatch::close);
      }
      assertThatThrownBy(() -> MicroBatch.split(batch, meta, 8, allocator))
          .isInstanceOf(TqException.class)
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    }
  }

  @Test
  void E92_splitKeepsJaggedRows(BufferAllocator allocator) {
    BatchMeta meta = BatchMeta.builder().globalIndexes(0, 1, 2).partitionId("p").build();
    List<Tensor> rows =
        List.of(
            Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2}, 2),
            Tensor.ofLongs(allocator, DType.INT64, new long[] {3, 4, 5}, 3),
            Tensor.ofLongs(allocator, DType.INT64, new long[] {6}, 1));
    JaggedColumn jagged;
    try {
      jagged = JaggedColumn.copyOf(allocator, DType.INT64, rows);
    } finally {
      rows.forEach(Tensor::close);
    }
    try (Batch batch =
        Batch.builder()
            .add("a", jagged)
            .dense("b", Tensor.ofLongs(allocator, DType.INT64, new long[] {0, 1, 2}, 3))
            .build()) {
      List<MicroBatch> parts = MicroBatch.split(batch, meta, 2, allocator);
      try {
        JaggedColumn first = (JaggedColumn) parts.get(0).batch().column("a");
        assertThat(first.row(1).toLongArray()).containsExactly(3, 4, 5);
        JaggedColumn second = (JaggedColumn) parts.get(1).batch().column("a");
        assertThat(second.row(0).toLongArray()).containsExactly(6);
        assertThat(ids(parts.get(1).batch(), "b")).containsExactly(2L);
        assertThat(parts.get(1).meta().globalIndexes()).containsExactly(2L);
      } finally {
        parts.forEach(MicroBatch::close);
      }
    }
  }

  @Test
  void E97_producerDoneKeepsLoaderWaitingBetweenPutsWithoutPreallocation() throws Exception {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1);
        StreamingLoader l =
            loader(tq.client(), "p", 0).termination(Termination.UNTIL_PRODUCER_DONE).build()) {
      List<Long> seen = Collections.synchronizedList(new ArrayList<>());
      CompletableFuture<Void> consumer =
          CompletableFuture.runAsync(
              () -> {
                for (MicroBatch mb : l) {
                  seen.addAll(checkAligned(mb));
                }
              },
              Executors.newVirtualThreadPerTaskExecutor());
      putIds(tq.client(), tq.allocator(), "p", 0, 1);
      Await.until(() -> seen.size() == 2, "the first two samples delivered");
      // Every sample of the partition is consumed now; without the signal the loader must wait.
      assertThat(tq.client().checkConsumptionStatus("p", "update_task")).isTrue();
      putIds(tq.client(), tq.allocator(), "p", 2, 3, 4, 5);
      BatchMeta last = putIds(tq.client(), tq.allocator(), "p", 6, 7);
      StreamingLoader.markProducerDone(tq.client(), last);
      consumer.get(20, TimeUnit.SECONDS);
      assertThat(seen).containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
    }
  }

  @Test
  void E97_preallocationKeepsFiniteLoaderWaitingUntilAllSamplesArrive() throws Exception {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 8);
        StreamingLoader l =
            loader(tq.client(), "p", 0).termination(Termination.UNTIL_CONSUMED).build()) {
      List<Long> seen = Collections.synchronizedList(new ArrayList<>());
      CompletableFuture<Void> consumer =
          CompletableFuture.runAsync(
              () -> {
                for (MicroBatch mb : l) {
                  seen.addAll(checkAligned(mb));
                }
              },
              Executors.newVirtualThreadPerTaskExecutor());
      putIds(tq.client(), tq.allocator(), "p", 0, 1);
      Await.until(() -> seen.size() == 2, "the first two samples delivered");
      assertThat(consumer).isNotDone();
      putIds(tq.client(), tq.allocator(), "p", 2, 3, 4, 5, 6, 7);
      consumer.get(20, TimeUnit.SECONDS);
      assertThat(seen).containsExactlyInAnyOrder(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L);
    }
  }

  @Test
  void E101_infiniteLoaderPollsAtMostOncePerIntervalAndEndsOnClose() throws Exception {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1)) {
      LoaderFixtures.CountingClient counting = new LoaderFixtures.CountingClient(tq.client());
      Duration interval = Duration.ofMillis(50);
      StreamingLoader l = loader(counting.client, "empty", 0).pollInterval(interval).build();
      CompletableFuture<Boolean> waiting =
          CompletableFuture.supplyAsync(
              () -> l.iterator().hasNext(), Executors.newVirtualThreadPerTaskExecutor());
      Await.until(() -> counting.getMetaNanos.size() >= 4, "four fetch attempts");
      List<Long> times = List.copyOf(counting.getMetaNanos);
      for (int i = 1; i < times.size(); i++) {
        assertThat(times.get(i) - times.get(i - 1))
            .as("gap before attempt %d", i)
            .isGreaterThanOrEqualTo(interval.toNanos());
      }
      assertThat(waiting).isNotDone();
      l.close();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).isFalse();
    }
  }

  @Test
  void E102_resetDropsBufferedBatchesAndReplaysFromTheSamplerCache() {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1)) {
      putIds(tq.client(), tq.allocator(), "p", LongStream.range(0, 8).toArray());
      try (StreamingLoader l =
          loader(tq.client(), "p", 0).prefetch(3).termination(Termination.UNTIL_CONSUMED).build()) {
        Iterator<MicroBatch> it = l.iterator();
        MicroBatch first = it.next();
        List<Long> firstIds = ids(first.batch(), "meta_idx");
        Await.until(() -> bufferedAhead(tq) >= 6, "three batches prefetched");
        l.reset();
        assertThat(first.isClosed()).isTrue();
        List<Long> replay = drain(l, tq.client());
        assertThat(replay.subList(0, 2)).isEqualTo(firstIds);
        assertThat(replay)
            .containsExactlyInAnyOrderElementsOf(LongStream.range(0, 8).boxed().toList());
        l.reset();
        assertThat(drain(l, tq.client())).isEqualTo(replay);
      }
    }
  }

  private static int bufferedAhead(TestSystem tq) {
    return tq.client()
        .getConsumptionStatus("p", "update_task")
        .map(s -> s.consumed().size())
        .orElse(0);
  }

  @Test
  void E103_stepSwitchesToTheNextPartition() {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1)) {
      putIds(tq.client(), tq.allocator(), "relax_demo_0", 0, 1, 2, 3);
      putIds(tq.client(), tq.allocator(), "relax_demo_1", 10, 11);
      try (StreamingLoader l =
          loader(tq.client(), "relax_demo_0", 0).termination(Termination.UNTIL_CONSUMED).build()) {
        assertThat(drain(l, tq.client())).containsExactly(0L, 1L, 2L, 3L);
        l.step("relax_demo_1");
        assertThat(l.partition()).isEqualTo("relax_demo_1");
        assertThat(drain(l, tq.client())).containsExactly(10L, 11L);
      }
    }
  }

  @Test
  void shouldRedeliverUnacknowledgedMicroBatchWhenAckDeadlinePasses() {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1)) {
      putIds(tq.client(), tq.allocator(), "p", 0, 1, 2, 3);
      try (StreamingLoader l =
          loader(tq.client(), "p", 0)
              .termination(Termination.UNTIL_CONSUMED)
              .ackTimeout(Duration.ofMillis(100))
              .build()) {
        Iterator<MicroBatch> it = l.iterator();
        MicroBatch dropped = it.next();
        List<Long> droppedIds = ids(dropped.batch(), "meta_idx");
        MicroBatch kept = it.next();
        kept.ack();
        assertThat(it.hasNext()).isTrue();
        MicroBatch again = it.next();
        assertThat(again.attempt()).isEqualTo(2);
        assertThat(again.meta().globalIndexes()).isEqualTo(dropped.meta().globalIndexes());
        assertThat(ids(again.batch(), "meta_idx")).isEqualTo(droppedIds);
        again.ack();
        assertThat(it.hasNext()).isFalse();
      }
    }
  }

  @Test
  void shouldDeliverAtMostOnceWhenAcknowledgementIsOff() {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1)) {
      putIds(tq.client(), tq.allocator(), "p", 0, 1, 2, 3);
      try (StreamingLoader l =
          loader(tq.client(), "p", 0).termination(Termination.UNTIL_CONSUMED).build()) {
        List<Integer> attempts = new ArrayList<>();
        for (MicroBatch mb : l) {
          attempts.add(mb.attempt());
        }
        assertThat(attempts).containsExactly(1, 1);
      }
    }
  }

  @Test
  void shouldBalanceRanksWithSeqlenBalancedSampler() throws Exception {
    try (TestSystem tq = system(deployment, new SeqlenBalancedSampler(1, 2), 1)) {
      putIds(tq.client(), tq.allocator(), "p", LongStream.range(0, 8).toArray());
      Set<Long> all = Collections.synchronizedSet(new HashSet<>());
      List<Integer> counts = Collections.synchronizedList(new ArrayList<>());
      try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
        List<Future<?>> runs = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
          int dp = rank;
          runs.add(
              pool.submit(
                  () -> {
                    try (StreamingLoader l =
                        loader(tq.client(), "p", dp)
                            .termination(Termination.UNTIL_CONSUMED)
                            .build()) {
                      List<Long> seen = drain(l, tq.client());
                      counts.add(seen.size());
                      all.addAll(seen);
                    }
                    return null;
                  }));
        }
        for (Future<?> run : runs) {
          run.get();
        }
      }
      assertThat(counts).containsExactly(4, 4);
      assertThat(all).containsExactlyInAnyOrderElementsOf(LongStream.range(0, 8).boxed().toList());
    }
  }

  @Test
  void shouldSurfaceReadFailureToTheConsumer() {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1)) {
      putIds(tq.client(), tq.allocator(), "p", 0, 1);
      MetaClient failing =
          (MetaClient)
              java.lang.reflect.Proxy.newProxyInstance(
                  MetaClient.class.getClassLoader(),
                  new Class<?>[] {MetaClient.class},
                  (proxy, method, args) -> {
                    if (method.getName().equals("getData")) {
                      throw new TqException(ErrorCode.STORAGE_ERROR, "simulated read failure");
                    }
                    try {
                      return method.invoke(tq.client(), args);
                    } catch (java.lang.reflect.InvocationTargetException e) {
                      throw e.getCause();
                    }
                  });
      try (StreamingLoader l = loader(failing, "p", 0).build()) {
        assertThatThrownBy(() -> l.iterator().hasNext())
            .isInstanceOf(TqException.class)
            .hasMessageContaining("simulated read failure");
      }
    }
  }

  @Test
  void US9_E100_pipelinedStagesReuseLoadersAcrossStepsAndSeeEachSampleOnce() throws Exception {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 8);
        ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      StreamingLoader rollout =
          loader(tq.client(), "relax_demo_0", 0)
              .task("relax_rollout")
              .fields("prompt")
              .termination(Termination.UNTIL_CONSUMED)
              .build();
      StreamingLoader update =
          loader(tq.client(), "relax_demo_0", 0)
              .task("relax_update")
              .fields("prompt", "response")
              .termination(Termination.UNTIL_CONSUMED)
              .build();
      try (rollout;
          update) {
        for (int step = 0; step < 2; step++) {
          String partition = "relax_demo_" + step;
          if (step > 0) {
            rollout.step(partition);
            update.step(partition);
          }
          long base = step * 100L;
          putIds(
              tq.client(),
              tq.allocator(),
              partition,
              "prompt",
              LongStream.range(base, base + 8).toArray());
          Future<List<Long>> stage1 =
              pool.submit(
                  () -> {
                    List<Long> seen = new ArrayList<>();
                    for (MicroBatch mb : rollout) {
                      List<Long> prompts = ids(mb.batch(), "prompt");
                      seen.addAll(prompts);
                      long[] responses = prompts.stream().mapToLong(v -> v * 10).toArray();
                      try (Batch out =
                          Batch.builder()
                              .dense(
                                  "response",
                                  Tensor.ofLongs(
                                      tq.allocator(), DType.INT64, responses, responses.length, 1))
                              .build()) {
                        tq.client().put(out, mb.meta());
                      }
                    }
                    return seen;
                  });
          Future<List<Long>> stage2 =
              pool.submit(
                  () -> {
                    List<Long> seen = new ArrayList<>();
                    for (MicroBatch mb : update) {
                      List<Long> prompts = ids(mb.batch(), "prompt");
                      List<Long> responses = ids(mb.batch(), "response");
                      for (int i = 0; i < prompts.size(); i++) {
                        assertThat(responses.get(i)).isEqualTo(prompts.get(i) * 10);
                      }
                      seen.addAll(prompts);
                    }
                    return seen;
                  });
          List<Long> expected = LongStream.range(base, base + 8).boxed().toList();
          assertThat(stage1.get(20, TimeUnit.SECONDS))
              .containsExactlyInAnyOrderElementsOf(expected);
          assertThat(stage2.get(20, TimeUnit.SECONDS))
              .containsExactlyInAnyOrderElementsOf(expected);
          tq.client().clearPartition(partition);
        }
      }
    }
  }

  @Test
  void shouldReleaseEveryBufferedBatchWhenClosedMidStream() {
    // The system throws on close if any micro-batch's memory is still leased.
    try (TestSystem tq = system(deployment, new SequentialSampler(), 1)) {
      putIds(tq.client(), tq.allocator(), "p", LongStream.range(0, 40).toArray());
      StreamingLoader l =
          loader(tq.client(), "p", 0).batchSize(4).fetchWorkers(3).prefetch(4).build();
      Iterator<MicroBatch> it = l.iterator();
      MicroBatch first = it.next();
      Await.until(
          () ->
              tq.client().getConsumptionStatus("p", "update_task").orElseThrow().consumed().size()
                  >= 16,
          "four batches fetched ahead");
      l.close();
      assertThat(first.isClosed()).isTrue();
      assertThat(it.hasNext()).isFalse();
      assertThatThrownBy(l::reset)
          .extracting(e -> ((TqException) e).code())
          .isEqualTo(ErrorCode.CLOSED);
    }
  }

  @Test
  void shouldLetALaggingReplicaReadEveryBatchOfItsGroupBeforeStopping() {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1)) {
      putIds(tq.client(), tq.allocator(), "p", LongStream.range(0, 8).toArray());
      List<Long> leader;
      try (StreamingLoader a =
          loader(tq.client(), "p", 0).termination(Termination.UNTIL_CONSUMED).build()) {
        leader = drain(a, tq.client());
      }
      // Every sample is consumed by the task now; the peer must still get the group's batches.
      assertThat(tq.client().checkConsumptionStatus("p", "update_task")).isTrue();
      try (StreamingLoader b =
          loader(tq.client(), "p", 0)
              .termination(Termination.UNTIL_CONSUMED)
              .fetchWorkers(2)
              .prefetch(2)
              .build()) {
        assertThat(drain(b, tq.client())).hasSize(8).isEqualTo(leader);
      }
    }
  }

  @Test
  void E95_constructionErrorsNameTheSetting() {
    try (TestSystem tq = system(deployment, new RankAwareSampler(), 1)) {
      MetaClient c = tq.client();
      assertInvalid(() -> loader(c, "p", 0).microBatchSize(0).build(), "micro_batch_size=0");
      assertInvalid(() -> loader(c, "p", 0).fields(List.of()).build(), "data_fields");
      assertInvalid(() -> loader(c, "p", -1).build(), "dp_rank=-1");
      assertInvalid(() -> loader(c, "p", 0).batchSize(0).build(), "batch_size=0");
      assertInvalid(() -> loader(c, "p", 0).microBatchSize(3).build(), "micro_batch_size=3");
      assertInvalid(() -> loader(c, "p", 0).prefetch(0).build(), "prefetch=0");
      assertInvalid(() -> loader(c, "p", 0).fetchWorkers(0).build(), "fetch_workers=0");
      assertInvalid(() -> loader(c, "p", 0).pollInterval(Duration.ZERO).build(), "poll_interval");
      assertInvalid(() -> loader(c, "", 0).build(), "partition_id");
    }
  }

  private static void assertInvalid(Runnable build, String fragment) {
    assertThatThrownBy(build::run)
        .isInstanceOf(TqException.class)
        .hasMessageContaining(fragment)
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
  }
}
