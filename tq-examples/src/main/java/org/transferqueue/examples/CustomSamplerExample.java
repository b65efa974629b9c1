package org.transferqueue.examples;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.transferqueue.client.MetaClient;
import org.transferqueue.client.TransferQueueSystem;
import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.LeakPolicy;
import org.transferqueue.sampler.SampleResult;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.sampler.SamplingRequest;
import org.transferqueue.tensor.Batch;

/**
 * US-5 "Custom sampler": a researcher plugs a sampler instance into the system. Three policies:
 * random with replacement (nothing consumed, so batches may repeat samples), random without
 * replacement (batches are disjoint), and priority sampling driven by {@code priority_scores}
 * passed with each fetch.
 */
public final class CustomSamplerExample {
  static final String PARTITION = "sampler_demo";
  static final List<Double> PRIORITY_SCORES =
      List.of(0.01, 0.01, 88.0, 999.0, 0.01, 0.01, 0.01, 10.0);

  private CustomSamplerExample() {}

  /** Random with replacement: any ready samples, none consumed. */
  static final class RandomWithReplacementSampler implements Sampler {
    private final Random random;

    RandomWithReplacementSampler(long seed) {
      this.random = new Random(seed);
    }

    @Override
    public SampleResult sample(SamplingRequest request) {
      List<Long> ready = request.ready();
      if (ready.size() < request.batchSize()) {
        return SampleResult.empty();
      }
      List<Long> picked = new ArrayList<>();
      for (int i = 0; i < request.batchSize(); i++) {
        picked.add(ready.get(random.nextInt(ready.size())));
      }
      return new SampleResult(picked, List.of());
    }
  }

  /** Random without replacement: distinct ready samples, consumed as returned. */
  static final class RandomWithoutReplacementSampler implements Sampler {
    private final Random random;

    RandomWithoutReplacementSampler(long seed) {
      this.random = new Random(seed);
    }

    @Override
    public SampleResult sample(SamplingRequest request) {
      List<Long> pool = new ArrayList<>(request.ready());
      if (pool.size() < request.batchSize()) {
        return SampleResult.empty();
      }
      List<Long> picked = new ArrayList<>();
      for (int i = 0; i < request.batchSize(); i++) {
        picked.add(pool.remove(random.nextInt(pool.size())));
      }
      return SampleResult.withoutReplacement(picked);
    }
  }

  /**
   * Priority sampling: distinct samples drawn with probability proportional to the caller's {@code
   * priority_scores} (indexed by global index); nothing is consumed, so every fetch draws from all.
   */
  static final class PrioritySampler implements Sampler {
    private final Random random;

    PrioritySampler(long seed) {
      this.random = new Random(seed);
    }

    @Override
    public SampleResult sample(SamplingRequest request) {
      List<Long> pool = new ArrayList<>(request.ready());
      if (pool.size() < request.batchSize()) {
        return SampleResult.empty();
      }
      List<?> scores = (List<?>) request.config().options().get("priority_scores");
      List<Long> picked = new ArrayList<>();
      for (int i = 0; i < request.batchSize(); i++) {
        double total = 0;
        for (long gi : pool) {
          total += score(scores, gi);
        }
        double target = random.nextDouble() * total;
        int chosen = pool.size() - 1;
        for (int k = 0; k < pool.size(); k++) {
          target -= score(scores, pool.get(k));
          if (target < 0) {
            chosen = k;
            break;
          }
        }
        picked.add(pool.remove(chosen));
      }
      return new SampleResult(picked, List.of());
    }

    private static double score(List<?> scores, long gi) {
      return scores == null || gi >= scores.size()
          ? 1.0
          : ((Number) scores.get((int) gi)).doubleValue();
    }
  }

  /**
   * What the example observed.
   *
   * @param withReplacement the batches drawn with replacement
   * @param withoutReplacement the batches of 3, 1 and 2 drawn without replacement
   * @param priorityCounts how often each global index was drawn by priority sampling
   */
  record Outcome(
      List<List<Long>> withReplacement,
      List<List<Long>> withoutReplacement,
      Map<Long, Integer> priorityCounts) {

    /**
     * The most frequently drawn global indexes of priority sampling.
     *
     * @param n how many
     * @return the {@code n} most frequent indexes, most frequent first
     */
    List<Long> topPriority(int n) {
      return priorityCounts.entrySet().stream()
          .sorted(Map.Entry.<Long, Integer>comparingByValue(Comparator.reverseOrder()))
          .limit(n)
          .map(Map.Entry::getKey)
          .toList();
    }
  }

  /**
   * Runs the example.
   *
   * @param args ignored
   */
  public static void main(String[] args) {
    run(System.out);
  }

  private static TransferQueueSystem start(Sampler sampler) {
    return TransferQueueSystem.builder()
        .config(TqConfig.builder().controller(c -> c.pollingMode(true)).build())
        .sampler(sampler)
        .leakPolicy(LeakPolicy.THROW)
        .start();
  }

  private static void putSamples(TransferQueueSystem tq, int n) {
    long[][] rows = new long[n][];
    for (int i = 0; i < n; i++) {
      rows[i] = new long[] {i};
    }
    try (Batch batch = Batch.builder().dense("data", Tensors.longs(tq.allocator(), rows)).build()) {
      tq.client().put(batch, PARTITION);
    }
  }

  private static List<Long> fetch(MetaClient client, String task, int n, SamplingConfig config) {
    return client
        .getMeta(
            GetMetadataRequest.fetch(PARTITION, List.of("data"), task, n)
                .withSamplingConfig(config))
        .globalIndexes();
  }

  /**
   * Runs the example, printing each step.
   *
   * @param out where to print
   * @return what the example observed
   */
  static Outcome run(PrintStream out) {
    List<List<Long>> with = new ArrayList<>();
    out.println("Random sampling with replacement (nothing consumed):");
    try (TransferQueueSystem tq = start(new RandomWithReplacementSampler(5))) {
      putSamples(tq, 6);
      for (int i = 0; i < 4; i++) {
        with.add(fetch(tq.client(), "with_replacement", 3, SamplingConfig.NONE));
        out.println("  batch " + i + ": " + with.getLast());
      }
    }

    List<List<Long>> without = new ArrayList<>();
    out.println("Random sampling without replacement (batches of 3, 1, 2 are disjoint):");
    try (TransferQueueSystem tq = start(new RandomWithoutReplacementSampler(5))) {
      putSamples(tq, 6);
      for (int n : new int[] {3, 1, 2}) {
        without.add(fetch(tq.client(), "without_replacement", n, SamplingConfig.NONE));
        out.println("  batch of " + n + ": " + without.getLast());
      }
      out.println(
          "  a further fetch finds nothing left: "
              + fetch(tq.client(), "without_replacement", 1, SamplingConfig.NONE));
    }

    Map<Long, Integer> counts = new LinkedHashMap<>();
    out.println("Priority sampling with priority_scores " + PRIORITY_SCORES + ":");
    try (TransferQueueSystem tq = start(new PrioritySampler(5))) {
      putSamples(tq, 8);
      SamplingConfig scores =
          new SamplingConfig(null, null, Map.of("priority_scores", PRIORITY_SCORES));
      for (int i = 0; i < 50; i++) {
        for (long gi : fetch(tq.client(), "priority", 3, scores)) {
          counts.merge(gi, 1, Integer::sum);
        }
      }
      out.println("  draws per global index over 50 batches of 3: " + counts);
    }
    Outcome outcome = new Outcome(with, without, counts);
    out.println("  most drawn: " + outcome.topPriority(3));
    return outcome;
  }

  /**
   * Whether batches share no sample.
   *
   * @param batches the batches
   * @return true when every index appears once
   */
  static boolean disjoint(List<List<Long>> batches) {
    Set<Long> seen = new HashSet<>();
    return batches.stream().flatMap(List::stream).allMatch(seen::add);
  }
}
