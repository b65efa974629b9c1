package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.tensor.DType;
import org.transferqueue.testing.Seeds;

/**
 * Seeded random operation sequences (insert, notify, fetch, reset, clear samples, clear partition)
 * over 3 partitions and 2 tasks, checked after every step against a simple model and against the
 * invariants of spec section 2.12.
 */
class ControllerModelTest {
  private static final List<String> PARTITIONS = List.of("p0", "p1", "p2");
  private static final List<String> TASKS = List.of("t0", "t1");
  private static final List<String> FIELDS = List.of("a", "b", "c");
  private static final int PRE_ALLOC = 2;
  private static final FieldSchema SCHEMA =
      new FieldSchema(DType.FLOAT32, FieldSchema.shapeOf(4), false, false, null);
  private static final FieldSchema CONFLICT =
      new FieldSchema(DType.INT8, FieldSchema.shapeOf(4), false, false, null);

  @Test
  void shouldMatchTheModelAfterEveryStep() {
    long base = Seeds.seed();
    for (int run = 0; run < 20; run++) {
      long seed = base + run;
      try {
        runSequence(seed, 250);
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("model test failed with seed=" + seed + ": " + e.getMessage(), e);
      }
    }
  }

  /** The reference model: plain sets and a FIFO pool. */
  private static final class Model {
    final ArrayDeque<Long> pool = new ArrayDeque<>();
    long counter;
    final Map<String, MPartition> partitions = new LinkedHashMap<>();

    List<Long> allocate(int n) {
      List<Long> out = new ArrayList<>();
      while (out.size() < n && !pool.isEmpty()) {
        out.add(pool.pollFirst());
      }
      while (out.size() < n) {
        out.add(counter++);
      }
      return out;
    }

    MPartition create(String id) {
      MPartition p = new MPartition();
      p.pre.addAll(allocate(PRE_ALLOC));
      partitions.put(id, p);
      return p;
    }
  }

  private static final class MPartition {
    final TreeSet<Long> active = new TreeSet<>();
    final TreeSet<Long> pre = new TreeSet<>();
    final Map<String, TreeSet<Long>> produced = new HashMap<>();
    final Map<String, TreeSet<Long>> consumed = new LinkedHashMap<>();
    FieldSchema cSchema;

    /** Whether writing field c with {@code incoming} conflicts with its recorded dtype. */
    boolean conflicts(FieldSchema incoming) {
      if (produced.getOrDefault("c", new TreeSet<>()).isEmpty()) {
        cSchema = null;
      }
      return incoming != null && cSchema != null && cSchema.dtype() != incoming.dtype();
    }

    TreeSet<Long> owned() {
      TreeSet<Long> all = new TreeSet<>(active);
      all.addAll(pre);
      return all;
    }
  }

  private static void runSequence(long seed, int steps) {
    Random random = new Random(seed);
    Controller c =
        new Controller(
            ControllerOptions.builder()
                .preallocSampleNum(PRE_ALLOC)
                .pollingMode(true)
                .fetchTimeout(Duration.ZERO)
                .build(),
            new SequentialSampler(),
            Clock.SYSTEM);
    Model m = new Model();
    for (int step = 0; step < steps; step++) {
      String pid = PARTITIONS.get(random.nextInt(PARTITIONS.size()));
      int op = random.nextInt(100);
      String what;
      if (op < 25) {
        what = insert(c, m, random, pid);
      } else if (op < 55) {
        what = notify(c, m, random, pid);
      } else if (op < 80) {
        what = fetch(c, m, random, pid);
      } else if (op < 86) {
        String task = random.nextBoolean() ? null : TASKS.get(random.nextInt(TASKS.size()));
        c.resetConsumption(pid, task);
        MPartition p = m.partitions.get(pid);
        if (p != null) {
          p.consumed.forEach(
              (t, set) -> {
                if (task == null || task.equals(t)) {
                  set.clear();
                }
              });
        }
        what = "reset " + pid + " " + task;
      } else if (op < 96) {
        what = clearSamples(c, m, random, pid);
      } else {
        c.clearPartition(pid);
        MPartition p = m.partitions.remove(pid);
        if (p != null) {
          m.pool.addAll(p.owned());
        }
        what = "clearPartition " + pid;
      }
      try {
        compare(c, m);
      } catch (AssertionError | RuntimeException e) {
        throw new AssertionError("step " + step + " (" + what + "): " + e.getMessage(), e);
      }
    }
  }

  private static String insert(Controller c, Model m, Random random, String pid) {
    int n = 1 + random.nextInt(5);
    BatchMeta meta = c.getMetadata(GetMetadataRequest.insert(pid, FIELDS, n));
    MPartition p = m.partitions.get(pid);
    if (p == null) {
      p = m.create(pid);
    }
    List<Long> expected = new ArrayList<>();
    while (expected.size() < n && !p.pre.isEmpty()) {
      expected.add(p.pre.pollFirst());
    }
    expected.addAll(m.allocate(n - expected.size()));
    p.active.addAll(expected);
    assertThat(meta.globalIndexes()).as("inserted indexes").isEqualTo(expected);
    return "insert " + pid + " " + n;
  }

  private static String notify(Controller c, Model m, Random random, String pid) {
    MPartition p = m.partitions.get(pid);
    List<Long> candidates = p == null ? List.of(0L) : new ArrayList<>(p.owned());
    List<Long> indexes = new ArrayList<>();
    for (Long index : candidates) {
      if (random.nextInt(3) == 0) {
        indexes.add(index);
      }
    }
    Map<String, FieldSchema> schema = new LinkedHashMap<>();
    for (String f : FIELDS) {
      if (random.nextBoolean()) {
        schema.put(f, SCHEMA);
      }
    }
    boolean conflict = random.nextInt(10) == 0;
    if (conflict) {
      schema.put("c", CONFLICT);
    }
    String what = "notify " + pid + " " + indexes + " " + schema.keySet() + " conflict=" + conflict;
    boolean expectConflict = p != null && p.conflicts(schema.get("c"));
    try {
      c.updateProductionStatus(ProductionUpdate.of(pid, indexes, schema));
    } catch (TqException e) {
      if (p == null) {
        assertThat(e.code()).isEqualTo(ErrorCode.UNKNOWN_PARTITION);
        return what;
      }
      assertThat(expectConflict).as("unexpected rejection: " + e).isTrue();
      assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_CONFLICT);
      return what;
    }
    assertThat(p).as("notification of unknown partition accepted").isNotNull();
    assertThat(expectConflict).as("conflict not detected").isFalse();
    if (schema.containsKey("c") && !indexes.isEmpty()) {
      p.cSchema = schema.get("c");
    }
    p.pre.removeAll(indexes);
    p.active.addAll(indexes);
    for (String f : schema.keySet()) {
      p.produced.computeIfAbsent(f, k -> new TreeSet<>());
      if (!indexes.isEmpty()) {
        p.produced.get(f).addAll(indexes);
      }
    }
    return what;
  }

  private static String fetch(Controller c, Model m, Random random, String pid) {
    String task = TASKS.get(random.nextInt(TASKS.size()));
    List<String> fields = new ArrayList<>(FIELDS.subList(0, 1 + random.nextInt(2)));
    if (random.nextBoolean()) {
      fields = List.of(FIELDS.get(random.nextInt(FIELDS.size())));
    }
    int n = 1 + random.nextInt(4);
    BatchMeta meta = c.getMetadata(GetMetadataRequest.fetch(pid, fields, task, n));
    MPartition p = m.partitions.get(pid);
    List<Long> expected = List.of();
    if (p != null) {
      TreeSet<Long> consumed = p.consumed.computeIfAbsent(task, k -> new TreeSet<>());
      List<Long> ready = new ArrayList<>();
      for (Long index : p.active) {
        boolean all = !consumed.contains(index);
        for (String f : fields) {
          all &= p.produced.getOrDefault(f, new TreeSet<>()).contains(index);
        }
        if (all) {
          ready.add(index);
        }
      }
      if (ready.size() >= n) {
        expected = ready.subList(0, n);
        consumed.addAll(expected);
      }
    }
    assertThat(meta.globalIndexes()).as("fetched").isEqualTo(expected);
    return "fetch " + pid + " " + task + " " + fields + " " + n;
  }

  private static String clearSamples(Controller c, Model m, Random random, String pid) {
    MPartition p = m.partitions.get(pid);
    List<Long> indexes = new ArrayList<>();
    if (p != null) {
      for (Long index : p.owned()) {
        if (random.nextInt(3) == 0) {
          indexes.add(index);
        }
      }
    }
    indexes.add((long) random.nextInt(40));
    c.clearSamples(ClearSamplesRequest.of(pid, indexes));
    if (p != null) {
      TreeSet<Long> cleared = new TreeSet<>(indexes);
      cleared.retainAll(p.active);
      p.active.removeAll(cleared);
      p.produced.values().forEach(s -> s.removeAll(cleared));
      p.consumed.values().forEach(s -> s.removeAll(cleared));
      m.pool.addAll(cleared);
    }
    return "clearSamples " + pid + " " + indexes;
  }

  private static void compare(Controller c, Model m) {
    c.checkInvariants();
    assertThat(c.listPartitions()).isEqualTo(new ArrayList<>(m.partitions.keySet()));
    for (Map.Entry<String, MPartition> e : m.partitions.entrySet()) {
      MPartition p = e.getValue();
      PartitionState s = c.partitionSnapshot(e.getKey()).orElseThrow();
      assertThat(s.active()).as("active").isEqualTo(toSet(p.active));
      assertThat(s.preAllocated()).as("preAllocated").isEqualTo(toSet(p.pre));
      assertThat(c.getPartitionIndexRange(e.getKey())).as("range").isEqualTo(toSet(p.owned()));
      for (FieldState f : s.fields()) {
        assertThat(f.produced())
            .as("produced " + f.name())
            .isEqualTo(toSet(p.produced.getOrDefault(f.name(), new TreeSet<>())));
      }
      Set<String> modelFields = p.produced.keySet();
      assertThat(s.fields().stream().map(FieldState::name).toList())
          .containsExactlyInAnyOrderElementsOf(modelFields);
      assertThat(s.consumption().keySet()).isEqualTo(p.consumed.keySet());
      p.consumed.forEach(
          (task, set) -> assertThat(s.consumption().get(task)).as(task).isEqualTo(toSet(set)));
    }
    assertThat(c.snapshotState().allocator().pool()).as("pool").containsExactlyElementsOf(m.pool);
  }

  private static IndexSet toSet(Set<Long> set) {
    return IndexSet.of(set.stream().mapToLong(Long::longValue).toArray());
  }
}
