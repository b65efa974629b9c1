package org.transferqueue.sampler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.transferqueue.testing.Seeds;

/**
 * Seeded property tests of the samplers driven through {@link ControllerModel}: no sample is served
 * twice to a task, prompt groups stay whole, data-parallel peers see identical batches and balanced
 * shares stay within the Karmarkar-Karp bound. The seed is printed in every failure.
 */
class SamplerPropertyTest {
  private static final int ROUNDS = 200;

  @Test
  void M67_everySamplerReturnsTwoEqualLengthLists() {
    List<Sampler> samplers =
        List.of(new SequentialSampler(), new GrpoGroupNSampler(2), new SeqlenBalancedSampler(2, 1));
    for (Sampler s : samplers) {
      SampleResult r =
          s.sample(
              new SamplingRequest(
                  SequentialSamplerTest.range(0, 8), 4, "p", "t", SamplingConfig.of(0, 0), null));
      assertThat(r.sampled()).as(s.name()).hasSameSizeAs(r.consumed()).hasSizeLessThanOrEqualTo(4);
    }
  }

  @Test
  void M68_batchZeroGivesEmpty() {
    for (Sampler s : List.<Sampler>of(new SequentialSampler(), new GrpoGroupNSampler(2))) {
      assertThat(s.sample(SamplingRequest.of(List.of(), 0))).isEqualTo(SampleResult.empty());
      assertThat(s.sample(SamplingRequest.of(SequentialSamplerTest.range(0, 4), 0)))
          .isEqualTo(SampleResult.empty());
    }
  }

  /** Groups of n produced in random order, member by member; fetches of whole-group batches. */
  @Test
  void shouldServeEachSampleOnceAndKeepGroupsWhole() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int round = 0; round < ROUNDS; round++) {
      int n = 1 + random.nextInt(4);
      int groups = 2 + random.nextInt(12);
      boolean sequential = random.nextInt(4) == 0;
      Sampler sampler = sequential ? new SequentialSampler() : new GrpoGroupNSampler(n);
      int groupSize = sequential ? 1 : n;
      ControllerModel c = new ControllerModel("p", sampler, true);
      for (long i = 0; i < (long) groups * n; i++) {
        c.tags.put(i, Map.of(GrpoGroupNSampler.GROUP_TAG, i / n));
      }
      List<Long> productionOrder = new ArrayList<>();
      for (long i = 0; i < (long) groups * n; i++) {
        productionOrder.add(i);
      }
      Collections.shuffle(productionOrder, random);
      Set<Long> served = new HashSet<>();
      String context = "seed=" + seed + " round=" + round + " n=" + n + " sequential=" + sequential;
      for (long index : productionOrder) {
        c.produced.add(index);
        int batch = groupSize * (1 + random.nextInt(2));
        for (long gi : c.fetch("task", batch, SamplingConfig.NONE)) {
          assertThat(served.add(gi)).as(context + " served twice: " + gi).isTrue();
        }
        if (!sequential) {
          assertWholeGroups(served, n, context);
        }
      }
      assertThat(c.consumed("task")).as(context).isEqualTo(served);
    }
  }

  private static void assertWholeGroups(Set<Long> served, int n, String context) {
    for (long gi : served) {
      long start = gi / n * n;
      for (long j = start; j < start + n; j++) {
        assertThat(served).as(context + " group of " + gi + " split").contains(j);
      }
    }
  }

  /** Workers of several data-parallel groups arrive in random order and run ahead (prefetch). */
  @Test
  void shouldServeIdenticalBatchesToPeersAndDisjointBatchesAcrossKeys() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int round = 0; round < ROUNDS; round++) {
      int dp = 1 + random.nextInt(4);
      int workers = 1 + random.nextInt(3);
      int batches = 1 + random.nextInt(4);
      int batch = 1 + random.nextInt(3);
      String context = "seed=" + seed + " round=" + round;
      ControllerModel c = new ControllerModel("p", new RankAwareSampler(), true);
      c.produce(0, (long) dp * batches * batch);
      Map<List<Integer>, List<Long>> byKey = new HashMap<>();
      List<int[]> pending = new ArrayList<>();
      int[][] next = new int[dp][workers];
      for (int step = 0; step < dp * workers * batches; step++) {
        pending.clear();
        for (int r = 0; r < dp; r++) {
          for (int w = 0; w < workers; w++) {
            if (next[r][w] < batches) {
              pending.add(new int[] {r, w});
            }
          }
        }
        int[] who = pending.get(random.nextInt(pending.size()));
        int bi = next[who[0]][who[1]]++;
        List<Long> got = c.fetch("t", batch, SamplingConfig.of(who[0], bi));
        assertThat(got).as(context).hasSize(batch);
        List<Long> previous = byKey.putIfAbsent(List.of(who[0], bi), got);
        if (previous != null) {
          assertThat(got).as(context + " peers differ").isEqualTo(previous);
        }
      }
      Set<Long> all = new HashSet<>();
      byKey.values().forEach(all::addAll);
      assertThat(all).as(context + " batches overlap").hasSize(dp * batches * batch);
    }
  }

  /** Ranks fetch balanced shares of whole groups in random order, some running ahead. */
  @Test
  void shouldShardWholeGroupsDisjointlyWithinTheBalanceBound() {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    for (int round = 0; round < ROUNDS; round++) {
      int n = 1 + random.nextInt(3);
      int dp = 1 + random.nextInt(3);
      int groupsPerRank = 1 + random.nextInt(3);
      int batches = 1 + random.nextInt(3);
      int perRank = groupsPerRank * n;
      String context = "seed=" + seed + " round=" + round + " n=" + n + " dp=" + dp;
      ControllerModel c = new ControllerModel("p", new SeqlenBalancedSampler(n, dp), true);
      long total = (long) perRank * dp * batches;
      long[] len = new long[(int) total];
      for (int i = 0; i < total; i++) {
        len[i] = 1 + random.nextInt(1000);
        c.tags.put((long) i, Map.of(SeqlenBalancedSampler.LENGTH_TAG, len[i]));
      }
      c.produce(0, total);
      List<int[]> order = new ArrayList<>();
      int[] nextBatch = new int[dp];
      while (order.size() < dp * batches) {
        int r = random.nextInt(dp);
        if (nextBatch[r] < batches) {
          order.add(new int[] {r, nextBatch[r]++});
        }
      }
      Map<Integer, List<List<Long>>> sharesByBatch = new HashMap<>();
      Set<Long> served = new HashSet<>();
      for (int[] call : order) {
        List<Long> share = c.fetch("t", perRank, SamplingConfig.of(call[0], call[1]));
        assertThat(share).as(context).hasSize(perRank);
        for (long gi : share) {
          assertThat(served.add(gi)).as(context + " served twice: " + gi).isTrue();
        }
        assertWholeGroups(new HashSet<>(share), n, context);
        sharesByBatch.computeIfAbsent(call[1], b -> new ArrayList<>()).add(share);
      }
      assertThat(served).as(context).hasSize((int) total);
      for (List<List<Long>> shares : sharesByBatch.values()) {
        long max = Long.MIN_VALUE;
        long min = Long.MAX_VALUE;
        long heaviestGroup = 0;
        for (List<Long> share : shares) {
          long sum = share.stream().mapToLong(i -> len[i.intValue()]).sum();
          max = Math.max(max, sum);
          min = Math.min(min, sum);
          for (int g = 0; g < share.size(); g += n) {
            long w = 0;
            for (int j = g; j < g + n; j++) {
              w += len[share.get(j).intValue()];
            }
            heaviestGroup = Math.max(heaviestGroup, w);
          }
        }
        assertThat(max - min).as(context + " unbalanced").isLessThanOrEqualTo(heaviestGroup);
      }
    }
  }
}
