package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.transferqueue.controller.Fixtures.controller;
import static org.transferqueue.controller.Fixtures.insertProduced;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.RankAwareSampler;
import org.transferqueue.sampler.SamplingConfig;

/** Samplers through the controller: scenarios M37-M39, F10 and J4 with the rank-aware sampler. */
class ControllerSamplerIntegrationTest {
  private static List<Long> fetch(Controller c, String partition, int dp, int batchIndex) {
    BatchMeta meta =
        c.getMetadata(
            GetMetadataRequest.fetch(partition, List.of("x"), "train", 2)
                .withSamplingConfig(SamplingConfig.of(dp, batchIndex))
                .withTimeout(Duration.ofMillis(50)));
    return meta.globalIndexes();
  }

  private static Controller rankAware(boolean polling) {
    Controller c = controller(1, polling);
    c.registerSampler(new RankAwareSampler());
    return c;
  }

  @Test
  void M37_rankAwarePrefetchInPollingMode() {
    Controller c = rankAware(true);
    insertProduced(c, "p", 6, "x");
    assertThat(fetch(c, "p", 0, 0)).containsExactly(0L, 1L);
    assertThat(fetch(c, "p", 0, 0)).containsExactly(0L, 1L);
    assertThat(fetch(c, "p", 1, 0)).containsExactly(2L, 3L);
    assertThat(fetch(c, "p", 0, 1)).containsExactly(4L, 5L);
    assertThat(fetch(c, "p", 1, 1)).isEmpty();
    assertThat(fetch(c, "p", 1, 0)).containsExactly(2L, 3L);
    assertThat(fetch(c, "p", 0, 1)).containsExactly(4L, 5L);
    assertThat(c.getConsumptionStatus("p", "train").orElseThrow().allConsumed()).isTrue();
    c.checkInvariants();
  }

  @Test
  void M38_blockingModeConsultsTheCacheFirst() {
    Controller c = rankAware(false);
    insertProduced(c, "p", 4, "x");
    assertThat(fetch(c, "p", 0, 0)).containsExactly(0L, 1L);
    assertThat(fetch(c, "p", 1, 0)).containsExactly(2L, 3L);
    assertThat(fetch(c, "p", 0, 0)).containsExactly(0L, 1L);
  }

  @Test
  void M39_controllerSuppliesPartitionAndTask() {
    Controller c = rankAware(true);
    insertProduced(c, "a", 2, "x");
    insertProduced(c, "b", 2, "x");
    assertThat(fetch(c, "a", 0, 0)).containsExactly(0L, 1L);
    assertThat(fetch(c, "b", 0, 0)).containsExactly(2L, 3L);
  }

  @Test
  void F10_clearPartitionDropsOnlyItsCacheEntries() {
    RankAwareSampler sampler = new RankAwareSampler();
    Controller c = controller(1, true);
    c.registerSampler(sampler);
    insertProduced(c, "a", 2, "x");
    insertProduced(c, "b", 2, "x");
    fetch(c, "a", 0, 0);
    fetch(c, "b", 0, 0);
    assertThat(sampler.cacheSize()).isEqualTo(2);
    c.clearPartition("a");
    assertThat(sampler.cacheSize()).isEqualTo(1);
    assertThat(sampler.hasCachedResult("b", "train", SamplingConfig.of(0, 0))).isTrue();
  }

  @Test
  void J4_rankAwareCacheSurvivesRestore() {
    Controller c = rankAware(true);
    insertProduced(c, "p", 4, "x");
    assertThat(fetch(c, "p", 0, 0)).containsExactly(0L, 1L);
    ControllerState saved = c.snapshotState();
    Controller fresh = rankAware(true);
    fresh.restoreState(saved);
    assertThat(fetch(fresh, "p", 0, 0)).containsExactly(0L, 1L);
    assertThat(fetch(fresh, "p", 1, 0)).containsExactly(2L, 3L);
  }
}
