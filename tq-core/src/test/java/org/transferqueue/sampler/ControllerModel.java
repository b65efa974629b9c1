package org.transferqueue.sampler;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A minimal model of the controller's fetch path for one partition, used to exercise the "through
 * the controller" sampler scenarios: ready = produced and not consumed by the task; the sampler's
 * cache is consulted before the readiness check (in both modes); consumed indexes are marked after
 * sampling. Blocking mode is modelled as "fail instead of returning empty": the controller would
 * wait, then time out and consume nothing.
 */
final class ControllerModel {
  /**
   * Raised where a blocking fetch would wait and time out: too few samples ready, or the sampler
   * returned nothing.
   */
  static final class NotServed extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotServed(String message) {
      super(message);
    }
  }

  final String partitionId;
  final Sampler sampler;
  final boolean polling;
  final TreeSet<Long> produced = new TreeSet<>();
  final Map<String, TreeSet<Long>> consumed = new HashMap<>();
  final Map<Long, Map<String, Object>> tags = new HashMap<>();

  ControllerModel(String partitionId, Sampler sampler, boolean polling) {
    this.partitionId = partitionId;
    this.sampler = sampler;
    this.polling = polling;
  }

  void produce(long from, long to) {
    for (long i = from; i < to; i++) {
      produced.add(i);
    }
  }

  TreeSet<Long> consumed(String task) {
    return consumed.computeIfAbsent(task, t -> new TreeSet<>());
  }

  List<Long> ready(String task) {
    List<Long> ready = new ArrayList<>();
    for (long i : produced) {
      if (!consumed(task).contains(i)) {
        ready.add(i);
      }
    }
    return ready;
  }

  List<Long> fetch(String task, int batchSize, SamplingConfig config) {
    List<Long> ready = ready(task);
    boolean cached = sampler.hasCachedResult(partitionId, task, config);
    if (!cached && ready.size() < batchSize) {
      if (polling) {
        return List.of();
      }
      throw new NotServed("timeout: " + ready.size() + " < " + batchSize);
    }
    SampleResult result =
        sampler.sample(
            new SamplingRequest(
                ready,
                batchSize,
                partitionId,
                task,
                config,
                gi -> tags.getOrDefault(gi, Map.of())));
    if (result.isEmpty() && !polling) {
      throw new NotServed("timeout: the sampler returned no samples");
    }
    consumed(task).addAll(result.consumed());
    return result.sampled();
  }
}
