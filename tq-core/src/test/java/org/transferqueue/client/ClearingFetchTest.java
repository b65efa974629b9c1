package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.client.LoaderFixtures.putIds;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.StorageManagerRegistry;
import org.transferqueue.storage.simple.SimpleStorageManager;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.tensor.Batch;

/**
 * A clear marks its samples before storage removes their data: a fetch that runs while storage is
 * still removing them never returns them (upstream PR #141's three-step clear).
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ClearingFetchTest {
  private static final Duration WAIT = Duration.ofSeconds(20);

  /** SimpleStorage whose clear waits, once entered, until the test releases it. */
  private static final class BlockingClearStorage implements StorageManager {
    final StorageManager delegate;
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    BlockingClearStorage(StorageManager delegate) {
      this.delegate = delegate;
    }

    @Override
    public String backendName() {
      return delegate.backendName();
    }

    @Override
    public PutResult put(Batch batch, BatchMeta meta) {
      return delegate.put(batch, meta);
    }

    @Override
    public Batch get(BatchMeta meta, BufferAllocator allocator) {
      return delegate.get(meta, allocator);
    }

    @Override
    public Optional<Duration> requestTimeout() {
      return delegate.requestTimeout();
    }

    @Override
    public ClearResult clear(BatchMeta meta) {
      entered.countDown();
      try {
        if (!release.await(WAIT.toSeconds(), TimeUnit.SECONDS)) {
          throw new IllegalStateException("the test never released the clear");
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      return delegate.clear(meta);
    }

    @Override
    public void close() {
      delegate.close();
    }
  }

  private static TransferQueueSystem system(BlockingClearStorage[] holder) {
    StorageManagerRegistry backends =
        StorageManagerRegistry.builder()
            .register(
                StorageManagerRegistry.SIMPLE_STORAGE,
                context -> {
                  holder[0] =
                      new BlockingClearStorage(
                          SimpleStorageManager.create(
                              context, ConfigMapper.simpleStorage(Systems.sysConfig())));
                  return holder[0];
                })
            .build();
    return Systems.builder(Systems.sysConfig()).storageBackends(backends).start();
  }

  private static GetMetadataRequest fetch(int batchSize) {
    return GetMetadataRequest.fetch("p", List.of("meta_idx"), "reader", batchSize);
  }

  @Test
  void shouldNotFetchSamplesWhoseClearHasBegunWhenStorageIsStillRemovingThem(
      BufferAllocator allocator) throws Exception {
    BlockingClearStorage[] storage = new BlockingClearStorage[1];
    try (TransferQueueSystem tq = system(storage)) {
      MetaClient client = tq.client();
      BatchMeta written = putIds(client, allocator, "p", 10, 11, 12, 13);
      BatchMeta doomed = written.selectSamples(new int[] {0, 1});
      List<Long> doomedIndexes = doomed.globalIndexes();

      CompletableFuture<Void> clear = client.clearSamplesAsync(doomed);
      assertThat(storage[0].entered.await(WAIT.toSeconds(), TimeUnit.SECONDS))
          .as("storage began removing the samples")
          .isTrue();

      // Storage still holds the doomed samples' data and the controller their indexes, but
      // their clear has begun: only the two others may be handed out.
      assertThat(client.getMeta(fetch(3)).isEmpty()).as("three ready samples remain? no").isTrue();
      BatchMeta fetched = client.getMeta(fetch(2));
      assertThat(fetched.globalIndexes())
          .as("a fetch during the clear")
          .hasSize(2)
          .doesNotContainAnyElementsOf(doomedIndexes);
      assertThat(client.getMeta(GetMetadataRequest.forceFetch("p", List.of())).globalIndexes())
          .as("a force fetch during the clear")
          .doesNotContainAnyElementsOf(doomedIndexes);
      assertThat(client.resetConsumption("p", "reader")).isTrue();
      assertThat(client.getMeta(fetch(2)).globalIndexes())
          .as("a fetch after a reset, during the clear")
          .doesNotContainAnyElementsOf(doomedIndexes);

      storage[0].release.countDown();
      clear.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      assertThat(client.getMeta(GetMetadataRequest.forceFetch("p", List.of())).globalIndexes())
          .containsExactlyInAnyOrderElementsOf(fetched.globalIndexes());
    }
  }

  @Test
  void shouldNotFetchSamplesOfAPartitionWhoseClearHasBegun(BufferAllocator allocator)
      throws Exception {
    BlockingClearStorage[] storage = new BlockingClearStorage[1];
    try (TransferQueueSystem tq = system(storage)) {
      MetaClient client = tq.client();
      putIds(client, allocator, "p", 1, 2);
      CompletableFuture<Void> clear = client.clearPartitionAsync("p");
      assertThat(storage[0].entered.await(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();

      assertThat(client.getMeta(fetch(1)).isEmpty()).as("a fetch during the clear").isTrue();

      storage[0].release.countDown();
      clear.get(WAIT.toSeconds(), TimeUnit.SECONDS);
      assertThat(client.getPartitionList()).doesNotContain("p");
    }
  }
}
