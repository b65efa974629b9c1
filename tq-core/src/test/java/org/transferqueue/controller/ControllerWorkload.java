package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.tensor.DType;

/**
 * A seeded random sequence of controller operations (partitions, inserts, production updates,
 * fetches, tags, keys, marks and clears, resets, reads that register tasks) against any {@link
 * ControllerApi}, remembering what each acknowledged call established: which samples are produced,
 * which a task consumed, which were cleared. The journal tests replay it against a durable
 * controller and compare states; the kill tests run it against a controller process, kill the
 * process at a random point and check the acknowledged facts after the restart.
 *
 * <p>Rejections the controller may legitimately answer (a stale generation, a sample cleared
 * meanwhile) are swallowed as part of the workload; an exception that is not a {@link TqException}
 * propagates. Not thread-safe.
 */
public final class ControllerWorkload {
  /** The fields every produced sample has ({@code a}) or may have ({@code b}, nested). */
  public static final List<String> FIELDS = List.of("a", "b");

  private static final List<String> PARTITIONS = List.of("p0", "p1", "p2");
  private static final List<String> TASKS = List.of("t0", "t1");
  private static final FieldSchema A = FieldSchema.regular(DType.FLOAT32, 4);

  /** A sample: its partition, index and generation. */
  public record Sample(String partition, long index, long generation) {}

  private final Random random;
  private final ControllerApi api;
  private final boolean everything;
  private final Map<String, List<Sample>> unproduced = new HashMap<>();
  private final Map<String, List<Sample>> known = new HashMap<>();
  private final Map<String, Integer> batchIndexes = new HashMap<>();
  private final List<ControllerState> snapshots = new ArrayList<>();
  private int keyCounter;
  private int probeCounter;

  /** Samples an acknowledged insert allocated. */
  public final Set<Sample> allocated = new HashSet<>();

  /** Produced samples (field {@code a}) as acknowledged. */
  public final Set<Sample> produced = new HashSet<>();

  /** Per task, the samples a fetch handed out and consumed, as acknowledged. */
  public final Map<String, Set<Sample>> consumed = new HashMap<>();

  /** Samples whose clear was acknowledged. */
  public final Set<Sample> cleared = new HashSet<>();

  /** Samples marked for clearing and not cleared: they stay, but no fetch hands them out. */
  public final Set<Sample> marked = new HashSet<>();

  /** Samples of a clear that was sent but not acknowledged: they may or may not be cleared. */
  public final Set<Sample> uncertain = new HashSet<>();

  /**
   * Creates a workload.
   *
   * @param seed the random seed
   * @param api the controller
   * @param everything also resets consumption, restores snapshots and takes checkpoints (state
   *     comparison only: those make the acknowledged facts moot)
   */
  public ControllerWorkload(long seed, ControllerApi api, boolean everything) {
    this.random = new Random(seed);
    this.api = api;
    this.everything = everything;
  }

  /**
   * Runs one random operation; a {@link TqException} the controller answers is swallowed unless it
   * is a transport or journal failure ({@code CONNECTION_FAILED}, {@code DEADLINE_EXCEEDED}, {@code
   * ILLEGAL_STATE}, {@code INTERNAL}), which propagates.
   */
  public void step() {
    String partition = PARTITIONS.get(random.nextInt(PARTITIONS.size()));
    int op = random.nextInt(100);
    try {
      if (op < 4) {
        api.createPartition(partition);
      } else if (op < 24) {
        insert(partition);
      } else if (op < 46) {
        produce(partition);
      } else if (op < 68) {
        fetch(partition);
      } else if (op < 74) {
        tags(partition);
      } else if (op < 80) {
        clearSamples(partition);
      } else if (op < 82) {
        clearPartition(partition);
      } else if (op < 89) {
        keys(partition);
      } else if (op < 93) {
        probe(partition);
      } else if (everything) {
        rare(partition, op);
      }
    } catch (TqException e) {
      if (e.code() == ErrorCode.ILLEGAL_STATE && e.getMessage().startsWith("sampler ")) {
        // A caching sampler's answer named a sample cleared since: the fetch is refused.
        return;
      }
      switch (e.code()) {
        case CONNECTION_FAILED, DEADLINE_EXCEEDED, ILLEGAL_STATE, INTERNAL, CORRUPT_DATA -> throw e;
        default -> {
          // A legitimate refusal (stale generation, unknown partition, cleared meanwhile).
        }
      }
    }
  }

  private void insert(String partition) {
    BatchMeta meta =
        api.getMetadata(GetMetadataRequest.insert(partition, FIELDS, 1 + random.nextInt(4)));
    long[] indexes = meta.globalIndexArray();
    long[] generations = meta.generationArray();
    for (int i = 0; i < indexes.length; i++) {
      Sample s = new Sample(partition, indexes[i], generations[i]);
      unproduced.computeIfAbsent(partition, k -> new ArrayList<>()).add(s);
      allocated.add(s);
      known.computeIfAbsent(partition, k -> new ArrayList<>()).add(s);
    }
  }

  private void produce(String partition) {
    List<Sample> waiting = unproduced.getOrDefault(partition, List.of());
    if (waiting.isEmpty()) {
      return;
    }
    int n = Math.min(waiting.size(), 1 + random.nextInt(3));
    List<Sample> batch = new ArrayList<>(waiting.subList(0, n));
    waiting.subList(0, n).clear();
    Map<String, FieldSchema> fields = new LinkedHashMap<>();
    fields.put("a", A);
    if (random.nextBoolean()) {
      List<List<Long>> shapes = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        shapes.add(List.of((long) 1 + random.nextInt(5)));
      }
      fields.put("b", FieldSchema.nestedOf(DType.INT64, shapes));
    }
    Map<Long, Map<String, Object>> backend = new LinkedHashMap<>();
    backend.put(batch.get(0).index(), Map.of("a", Map.of("unit", (long) random.nextInt(3))));
    api.updateProductionStatus(
        new ProductionUpdate(
            partition,
            batch.stream().map(Sample::index).toList(),
            fields,
            backend,
            batch.stream().map(Sample::generation).toList()));
    produced.addAll(batch);
  }

  private void fetch(String partition) {
    String task = TASKS.get(random.nextInt(TASKS.size()));
    int batchIndex = batchIndexes.merge(partition + "/" + task, 1, Integer::sum);
    GetMetadataRequest request =
        new GetMetadataRequest(
            FetchMode.FETCH,
            partition,
            List.of("a"),
            task,
            1 + random.nextInt(2),
            SamplingConfig.of(random.nextInt(2), batchIndex),
            null,
            null);
    api.tryGetMetadata(request)
        .ifPresent(
            meta -> {
              long[] indexes = meta.globalIndexArray();
              long[] generations = meta.generationArray();
              Set<Sample> taken = consumed.computeIfAbsent(task, k -> new HashSet<>());
              for (int i = 0; i < indexes.length; i++) {
                taken.add(new Sample(partition, indexes[i], generations[i]));
              }
            });
  }

  private void tags(String partition) {
    Sample s = pick(partition);
    if (s == null) {
      return;
    }
    Map<String, Object> record = new LinkedHashMap<>();
    record.put("score", (long) random.nextInt(100));
    if (random.nextBoolean()) {
      record.put("label", "x" + random.nextInt(5));
    }
    Map<Long, Map<String, Object>> records = Map.of(s.index(), record);
    api.setTags(
        random.nextBoolean()
            ? TagUpdate.merge(partition, records)
            : TagUpdate.replace(partition, records));
  }

  private void clearSamples(String partition) {
    List<Sample> samples = known.getOrDefault(partition, List.of());
    if (samples.isEmpty()) {
      return;
    }
    List<Sample> chosen = new ArrayList<>();
    for (int i = 0; i < 1 + random.nextInt(2) && !samples.isEmpty(); i++) {
      chosen.add(samples.remove(random.nextInt(samples.size())));
    }
    unproduced.getOrDefault(partition, new ArrayList<>()).removeAll(chosen);
    ClearSamplesRequest request =
        new ClearSamplesRequest(
            chosen.stream().map(Sample::index).toList(),
            chosen.stream().map(Sample::partition).toList(),
            random.nextBoolean(),
            chosen.stream().map(Sample::generation).toList());
    uncertain.addAll(chosen);
    api.markClearing(request);
    if (random.nextInt(5) > 0) {
      api.clearSamples(request);
      cleared.addAll(chosen);
    } else {
      marked.addAll(chosen);
    }
    uncertain.removeAll(chosen);
  }

  private void clearPartition(String partition) {
    if (random.nextInt(3) > 0) {
      return;
    }
    List<Sample> gone = new ArrayList<>(known.getOrDefault(partition, List.of()));
    for (Sample s : allocated) {
      if (s.partition().equals(partition)) {
        gone.add(s);
      }
    }
    known.remove(partition);
    unproduced.remove(partition);
    uncertain.addAll(gone);
    api.clearPartition(partition);
    cleared.addAll(gone);
    uncertain.removeAll(gone);
  }

  private void keys(String partition) {
    List<String> keys = new ArrayList<>();
    int n = 1 + random.nextInt(3);
    for (int i = 0; i < n; i++) {
      keys.add(
          "k" + (random.nextBoolean() ? keyCounter++ : random.nextInt(Math.max(1, keyCounter))));
    }
    List<String> distinct = keys.stream().distinct().toList();
    if (random.nextBoolean()) {
      api.resolveKeys(partition, distinct, true);
    } else {
      api.resolveKeysForPut(partition, distinct, Map.of("a", A), distinct.size());
    }
  }

  private void probe(String partition) {
    String task = random.nextBoolean() ? "probe" + probeCounter++ : TASKS.get(0);
    if (random.nextBoolean()) {
      api.scanReady(partition, List.of("a"), task);
    } else {
      api.getConsumptionStatus(partition, task);
    }
  }

  private void rare(String partition, int op) {
    if (op < 96) {
      api.resetConsumption(partition, random.nextBoolean() ? null : TASKS.get(0));
    } else if (op < 98) {
      snapshots.add(api.snapshotState());
    } else if (op < 99) {
      if (!snapshots.isEmpty()) {
        api.restoreState(snapshots.get(random.nextInt(snapshots.size())));
        unproduced.clear();
        known.clear();
      }
    } else if (api instanceof Controller controller) {
      controller.checkpoint();
    }
  }

  private Sample pick(String partition) {
    List<Sample> samples = known.getOrDefault(partition, List.of());
    return samples.isEmpty() ? null : samples.get(random.nextInt(samples.size()));
  }
}
