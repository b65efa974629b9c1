package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.sampler.RankAwareSampler;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;

class StreamingPipelineTest {

  private static TransferQueueSystem system(int batchSize) {
    return TransferQueueSystem.builder()
        .config(
            TqConfig.builder()
                .controller(c -> c.pollingMode(true).preallocSampleNum(batchSize))
                .backend(b -> b.simpleStorage(s -> s.numDataStorageUnits(2)))
                .build())
        .sampler(new RankAwareSampler())
        .leakPolicy(LeakPolicy.THROW)
        .start();
  }

  /** A client whose partition puts (the driver's prompts) store zeroed prompt_ids. */
  private static MetaClient corruptingPrompts(MetaClient delegate, BufferAllocator allocator) {
    return (MetaClient)
        Proxy.newProxyInstance(
            MetaClient.class.getClassLoader(),
            new Class<?>[] {MetaClient.class},
            (proxy, method, args) -> {
              try {
                if (method.getName().equals("put")
                    && args.length == 2
                    && args[1] instanceof String
                    && args[0] instanceof Batch prompts) {
                  Tensor ids = ((DenseColumn) prompts.column("sample_id")).tensor();
                  Tensor tokens = ((DenseColumn) prompts.column("prompt_ids")).tensor();
                  long[] shape = tokens.shape();
                  try (Batch wrong =
                      Batch.builder()
                          .dense(
                              "sample_id",
                              Tensor.ofLongs(
                                  allocator, DType.INT64, ids.toLongArray(), ids.shape()))
                          .dense(
                              "prompt_ids",
                              Tensor.ofLongs(
                                  allocator,
                                  DType.INT64,
                                  new long[tokens.toLongArray().length],
                                  shape))
                          .build()) {
                    return method.invoke(delegate, wrong, args[1]);
                  }
                }
                return method.invoke(delegate, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  @Test
  @Timeout(60)
  void shouldProcessEverySampleOnceAtEveryStageWhenTheDataIsIntact() {
    AtomicReference<String> mismatch = new AtomicReference<>();
    try (TransferQueueSystem tq = system(8);
        ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
        StreamingPipeline pipeline =
            new StreamingPipeline(tq.client(), tq.allocator(), workers, 2, 8, 2, 4, 8, mismatch)) {
      pipeline.runStep(0);
      pipeline.runStep(1);
      assertThat(mismatch.get()).isNull();
      assertThat(pipeline.stages())
          .extracting(s -> s.name)
          .containsExactly("rollout", "ref", "actor", "reward", "update");
      assertThat(pipeline.stages()).allSatisfy(s -> assertThat(s.samples.get()).isEqualTo(16));
      assertThat(tq.client().getPartitionList()).isEmpty();
    }
  }

  @Test
  @Timeout(60)
  void shouldReportAMismatchWhenAStageReadsOtherValuesThanWereWritten() {
    AtomicReference<String> mismatch = new AtomicReference<>();
    try (TransferQueueSystem tq = system(8);
        ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
        StreamingPipeline pipeline =
            new StreamingPipeline(
                corruptingPrompts(tq.client(), tq.allocator()),
                tq.allocator(),
                workers,
                1,
                8,
                2,
                4,
                8,
                mismatch)) {
      pipeline.runStep(0);
      assertThat(mismatch.get()).contains("read wrong prompt_ids of sample");
    }
  }
}
