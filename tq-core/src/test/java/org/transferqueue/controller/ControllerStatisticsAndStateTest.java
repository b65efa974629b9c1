package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.transferqueue.controller.Fixtures.controller;
import static org.transferqueue.controller.Fixtures.fetch;
import static org.transferqueue.controller.Fixtures.ids;
import static org.transferqueue.controller.Fixtures.insert;
import static org.transferqueue.controller.Fixtures.insertProduced;
import static org.transferqueue.controller.Fixtures.produce;
import static org.transferqueue.controller.Fixtures.range;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.sampler.SampleResult;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SamplerState;
import org.transferqueue.sampler.SamplingRequest;

/** Scenarios 6.I (statistics) and 6.J (checkpoint state). */
class ControllerStatisticsAndStateTest {
  private final Controller c = controller();

  @Test
  void I1_statisticsDescribeThePartition() {
    insertProduced(c, "p", 5, "a", "b", "c");
    fetch(c, "p", "t", 2, "a");
    PartitionStatistics stats = c.partitionStatistics("p").orElseThrow();
    assertThat(stats.partitionId()).isEqualTo("p");
    assertThat(stats.createdAtMillis()).isPositive();
    assertThat(stats.totalSamples()).isEqualTo(5);
    assertThat(stats.totalFields()).isEqualTo(3);
    assertThat(stats.registeredTasks()).containsExactly("t");
    assertThat(stats.producedSamples()).isEqualTo(5);
    assertThat(stats.producedPerField()).containsOnlyKeys("a", "b", "c");
    assertThat(stats.consumedPerTask()).containsEntry("t", 2);
  }

  @Test
  void I2_progressRatios() {
    insert(c, "p", 8, "a");
    produce(c, "p", range(0, 4), "a");
    fetch(c, "p", "t", 2, "a");
    PartitionStatistics stats = c.partitionStatistics("p").orElseThrow();
    assertThat(stats.totalSamples()).isEqualTo(8);
    assertThat(stats.producedSamples()).isEqualTo(4);
    assertThat(stats.productionProgress()).isEqualTo(0.5);
    assertThat(stats.producedPerField()).isEqualTo(Map.of("a", 4));
    assertThat(stats.productionProgress("a")).isEqualTo(0.5);
    assertThat(stats.consumedPerTask()).isEqualTo(Map.of("t", 2));
    assertThat(stats.consumptionProgress("t")).isEqualTo(0.25);
    assertThat(stats.registeredTasks()).containsExactly("t");
  }

  @Test
  void I3_statisticsWithoutConsumption() {
    insertProduced(c, "p", 3, "a", "b");
    PartitionStatistics stats = c.partitionStatistics("p").orElseThrow();
    assertThat(stats.totalFields()).isEqualTo(2);
    assertThat(stats.totalSamples()).isEqualTo(3);
    assertThat(stats.consumedPerTask()).isEmpty();
  }

  @Test
  void shouldReportTotalsOverPartitionsAndAllocator() {
    insertProduced(c, "a", 3, "x");
    insert(c, "b", 2, "x");
    c.clearSamples(ClearSamplesRequest.of("a", ids(0)));
    ControllerStatistics stats = c.statistics();
    assertThat(stats.partitions())
        .extracting(PartitionStatistics::partitionId)
        .containsExactly("a", "b");
    assertThat(stats.totalSamples()).isEqualTo(4);
    assertThat(stats.totalProducedSamples()).isEqualTo(2);
    assertThat(stats.allocatedIndexes()).isEqualTo(4);
    assertThat(stats.reusableIndexes()).isEqualTo(1);
    assertThat(stats.nextFreshIndex()).isEqualTo(5);
  }

  @Test
  void J1_restoredControllerHasTheSameState() {
    insertProduced(c, "ckpt_partition", 4, "f1", "f2");
    c.setTags(TagUpdate.merge("ckpt_partition", Map.of(1L, Map.of("k", "v"))));
    fetch(c, "ckpt_partition", "t", 2, "f1");
    ControllerState saved = c.snapshotState();
    Controller fresh = controller();
    fresh.restoreState(saved);
    PartitionState before = c.partitionSnapshot("ckpt_partition").orElseThrow();
    PartitionState after = fresh.partitionSnapshot("ckpt_partition").orElseThrow();
    assertThat(after).isEqualTo(before);
    assertThat(after.active()).isEqualTo(IndexSet.range(0, 4));
    assertThat(fresh.getPartitionIndexRange("ckpt_partition")).isEqualTo(IndexSet.range(0, 4));
    assertThat(fresh.snapshotState()).isEqualTo(saved);
    assertThat(fetch(fresh, "ckpt_partition", "t", 2, "f1").globalIndexes())
        .containsExactly(2L, 3L);
    fresh.checkInvariants();
  }

  @Test
  void J2_restoredAllocatorContinuesItsCounter() {
    insertProduced(c, "ckpt_p1", 4, "x");
    insertProduced(c, "ckpt_p2", 4, "x");
    Controller fresh = controller();
    fresh.restoreState(c.snapshotState());
    assertThat(insert(fresh, "ckpt_p3", 2, "x").globalIndexes()).containsExactly(8L, 9L);
    fresh.checkInvariants();
  }

  @Test
  void J3_stateOfAnotherSamplerIsRejectedAndNothingChanges() {
    insertProduced(c, "p", 2, "x");
    ControllerState saved = c.snapshotState();
    Controller other = controller();
    other.registerSampler(request -> SampleResult.empty());
    other.createPartition("mine");
    assertThatThrownBy(() -> other.restoreState(saved))
        .isInstanceOf(TqException.class)
        .extracting(e -> ((TqException) e).code())
        .isEqualTo(ErrorCode.INVALID_CONFIGURATION);
    assertThat(other.listPartitions()).containsExactly("mine");
  }

  @Test
  void J4_samplerStateSurvivesRestore() {
    insertProduced(c, "p", 4, "x");
    RememberingSampler first = new RememberingSampler();
    c.registerSampler(first);
    fetch(c, "p", "t", 2, "x");
    ControllerState saved = c.snapshotState();
    Controller fresh = controller();
    RememberingSampler second = new RememberingSampler();
    fresh.registerSampler(second);
    fresh.restoreState(saved);
    assertThat(second.served).containsExactly(0L, 1L);
  }

  @Test
  void J5_restoreDropsLaterPartitionsAndRestoresTheId() {
    insertProduced(c, "p", 2, "x");
    ControllerState saved = c.snapshotState();
    c.createPartition("later");
    Controller fresh = controller();
    assertThat(fresh.controllerId()).isNotEqualTo(c.controllerId());
    c.restoreState(saved);
    assertThat(c.listPartitions()).containsExactly("p");
    fresh.restoreState(saved);
    assertThat(fresh.controllerId()).isEqualTo(saved.controllerId()).startsWith("TQ_CONTROLLER_");
  }

  /** A sequential sampler that checkpoints the indexes it has served. */
  private static final class RememberingSampler implements Sampler {
    final List<Long> served = new ArrayList<>();

    @Override
    public SampleResult sample(SamplingRequest request) {
      List<Long> batch = List.copyOf(request.ready().subList(0, request.batchSize()));
      served.addAll(batch);
      return SampleResult.withoutReplacement(batch);
    }

    @Override
    public SamplerState saveState() {
      return new SamplerState(name(), List.of(Map.of("served", List.copyOf(served))));
    }

    @Override
    public void loadState(SamplerState state) {
      Sampler.super.loadState(state);
      served.clear();
      for (Object o : (List<?>) state.entries().get(0).get("served")) {
        served.add((Long) o);
      }
    }
  }
}
