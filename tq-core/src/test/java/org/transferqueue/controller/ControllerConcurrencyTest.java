package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.controller.Fixtures.controller;
import static org.transferqueue.controller.Fixtures.fetch;
import static org.transferqueue.controller.Fixtures.insert;
import static org.transferqueue.controller.Fixtures.insertProduced;
import static org.transferqueue.controller.Fixtures.produce;
import static org.transferqueue.controller.Fixtures.range;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.testing.Await;

/** Scenarios 6.N (robustness and concurrency) and a many-thread producer/consumer run. */
@Timeout(60)
class ControllerConcurrencyTest {
  private static ErrorCode codeOf(Throwable e) {
    return ((TqException) e).code();
  }

  @Test
  void N1_failingSamplerBecomesAnErrorAndTheControllerKeepsServing() {
    Controller c = controller();
    insertProduced(c, "p", 4, "x");
    c.registerSampler(
        request -> {
          throw new IllegalStateException("boom");
        });
    assertThatThrownBy(() -> fetch(c, "p", "t", 2, "x"))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("boom")
        .extracting(ControllerConcurrencyTest::codeOf)
        .isEqualTo(ErrorCode.INTERNAL);
    c.registerSampler(
        request -> {
          throw new IllegalArgumentException("bad batch");
        });
    assertThatThrownBy(() -> fetch(c, "p", "t", 2, "x"))
        .extracting(ControllerConcurrencyTest::codeOf)
        .isEqualTo(ErrorCode.INVALID_ARGUMENT);
    assertThat(c.getConsumptionStatus("p", "t").orElseThrow().consumed().isEmpty()).isTrue();
    c.registerSampler(
        request -> new org.transferqueue.sampler.SampleResult(List.of(99L), List.of()));
    assertThatThrownBy(() -> fetch(c, "p", "t", 2, "x"))
        .hasMessageContaining("not an active sample")
        .extracting(ControllerConcurrencyTest::codeOf)
        .isEqualTo(ErrorCode.ILLEGAL_STATE);
    c.registerSampler(new SequentialSampler());
    assertThat(fetch(c, "p", "t", 2, "x").globalIndexes()).containsExactly(0L, 1L);
    c.checkInvariants();
  }

  @Test
  void N3_concurrentNotificationsAndPollingFetches() throws Exception {
    Controller c = controller(1, true);
    int perThread = 50;
    insert(c, "p", 8 * perThread, "x");
    List<String> tasks = List.of("t0", "t1", "t2", "t3");
    ExecutorService pool = Executors.newFixedThreadPool(12);
    try {
      List<Future<?>> producers = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        int from = t * perThread;
        producers.add(
            pool.submit(
                () -> {
                  for (int i = from; i < from + perThread; i += 5) {
                    produce(c, "p", range(i, i + 5), "x");
                  }
                }));
      }
      List<Future<List<Long>>> consumers = new ArrayList<>();
      for (String task : tasks) {
        consumers.add(
            pool.submit(
                () -> {
                  List<Long> got = new ArrayList<>();
                  while (got.size() < 8 * perThread) {
                    got.addAll(fetch(c, "p", task, 3, "x").globalIndexes());
                    if (got.size() + 3 > 8 * perThread) {
                      got.addAll(fetch(c, "p", task, 1, "x").globalIndexes());
                    }
                  }
                  return got;
                }));
      }
      for (Future<?> f : producers) {
        f.get(30, TimeUnit.SECONDS);
      }
      assertThat(c.getProductionStatus("p", List.of("x")).orElseThrow().allProduced()).isTrue();
      for (Future<List<Long>> f : consumers) {
        List<Long> got = f.get(30, TimeUnit.SECONDS);
        assertThat(got).doesNotHaveDuplicates().hasSize(8 * perThread);
      }
    } finally {
      pool.shutdownNow();
    }
    c.checkInvariants();
  }

  @Test
  void N4_requestsProceedWhileAFetchWaits() throws Exception {
    Controller c = controller();
    insertProduced(c, "p", 2, "x");
    insertProduced(c, "other", 2, "x");
    CompletableFuture<BatchMeta> waiting =
        CompletableFuture.supplyAsync(
            () ->
                c.getMetadata(
                    GetMetadataRequest.fetch("p", List.of("x"), "t", 5)
                        .withTimeout(Duration.ofSeconds(30))));
    Await.until(() -> c.waitingFetches() == 1, "fetch waiting");
    assertThat(c.getConsumptionStatus("p", "t")).isPresent();
    assertThat(c.setTags(TagUpdate.merge("p", Map.of(0L, Map.of("k", 1))))).isEqualTo(1);
    assertThat(c.clearPartition("other")).isTrue();
    assertThat(c.statistics().partitions()).hasSize(1);
    Await.until(() -> c.waitingFetches() == 1, "fetch waiting again after the clear");
    assertThat(waiting).isNotDone();
    insertProduced(c, "p", 3, "x");
    assertThat(waiting.get(30, TimeUnit.SECONDS).size()).isEqualTo(5);
  }

  @Test
  void N5_racingFetchesOfOneTaskGetDisjointBatches() throws Exception {
    for (int round = 0; round < 20; round++) {
      Controller c = controller();
      insertProduced(c, "p", 4, "x");
      CountDownLatch start = new CountDownLatch(1);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      try {
        List<Future<List<Long>>> futures = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
          futures.add(
              pool.submit(
                  () -> {
                    start.await();
                    return fetch(c, "p", "t", 2, "x").globalIndexes();
                  }));
        }
        start.countDown();
        Set<Long> all = new HashSet<>(futures.get(0).get(10, TimeUnit.SECONDS));
        all.addAll(futures.get(1).get(10, TimeUnit.SECONDS));
        assertThat(all).containsExactlyInAnyOrder(0L, 1L, 2L, 3L);
      } finally {
        pool.shutdownNow();
      }
    }
  }

  /**
   * 16 producers insert and notify batches in one partition while 16 consumers (8 per task) fetch
   * with blocking waits, and a side thread keeps creating and clearing another partition so that
   * indexes are recycled concurrently.
   */
  @Test
  void shouldServeEverySampleOncePerTaskWithManyProducersAndConsumers() throws Exception {
    Controller c = controller(2, false);
    int producers = 16;
    int batchesPerProducer = 25;
    int batch = 8;
    int total = producers * batchesPerProducer * batch;
    List<String> tasks = List.of("actor", "critic");
    int consumersPerTask = 8;
    int fetchBatch = 4;
    int fetchesPerConsumer = total / (consumersPerTask * fetchBatch);
    ExecutorService pool =
        Executors.newFixedThreadPool(producers + tasks.size() * consumersPerTask + 1);
    Map<String, ConcurrentLinkedQueue<Long>> served =
        Map.of("actor", new ConcurrentLinkedQueue<>(), "critic", new ConcurrentLinkedQueue<>());
    ConcurrentLinkedQueue<Long> produced = new ConcurrentLinkedQueue<>();
    AtomicBoolean stop = new AtomicBoolean();
    try {
      List<Future<?>> work = new ArrayList<>();
      for (String task : tasks) {
        for (int i = 0; i < consumersPerTask; i++) {
          work.add(
              pool.submit(
                  () -> {
                    for (int f = 0; f < fetchesPerConsumer; f++) {
                      BatchMeta meta =
                          c.getMetadata(
                              GetMetadataRequest.fetch("p", List.of("x", "y"), task, fetchBatch)
                                  .withTimeout(Duration.ofSeconds(20)));
                      served.get(task).addAll(meta.globalIndexes());
                    }
                    return null;
                  }));
        }
      }
      for (int i = 0; i < producers; i++) {
        work.add(
            pool.submit(
                () -> {
                  for (int b = 0; b < batchesPerProducer; b++) {
                    List<Long> indexes = insert(c, "p", batch, "x", "y").globalIndexes();
                    produce(c, "p", indexes, "x");
                    produce(c, "p", indexes, "y");
                    produced.addAll(indexes);
                  }
                  return null;
                }));
      }
      Future<?> side =
          pool.submit(
              () -> {
                while (!stop.get()) {
                  insertProduced(c, "side", 3, "x");
                  c.clearPartition("side");
                }
                return null;
              });
      for (Future<?> f : work) {
        f.get(60, TimeUnit.SECONDS);
      }
      stop.set(true);
      side.get(10, TimeUnit.SECONDS);
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
    assertThat(produced).doesNotHaveDuplicates().hasSize(total);
    for (String task : tasks) {
      assertThat(served.get(task))
          .as("samples served to %s", task)
          .doesNotHaveDuplicates()
          .containsExactlyInAnyOrderElementsOf(produced);
      assertThat(c.getConsumptionStatus("p", task).orElseThrow().consumed().size())
          .isEqualTo(total);
    }
    c.checkInvariants();
  }
}
