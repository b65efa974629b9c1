package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.testing.Seeds;

/**
 * Random sequences of puts, fetches, rewrites, clears, partition clears and key-value puts and
 * clears, with metadata kept along the way and replayed later, checked after every step against a
 * model of what each sample holds: every read returns exactly the values last written for each of
 * its samples (and, through metadata made after that write, its shape and column kind), or a typed
 * error; a read or write through metadata naming a sample that was cleared always fails with {@code
 * STALE_METADATA}; nothing stored changes by a refused call.
 *
 * <p>The sequence is seeded: the seed is printed in every failure, and {@code -Dtq.seed=N} replays
 * it.
 */
@ParameterizedClass
@EnumSource(Deployment.class)
@ExtendWith(LeakCheckExtension.class)
class SampleIntegrityModelTest {
  private static final int STEPS = 160;
  private static final List<String> PARTITIONS = List.of("p0", "p1", "p2");
  private static final String KV = "kv";
  private static final List<String> KEYS = List.of("k0", "k1", "k2", "k3");

  @Parameter Deployment deployment;

  /** A sample: its global index and generation. */
  private record Sample(long gi, long generation) {}

  /** What a sample holds in field {@code x}, and the write that put it there. */
  private record Cell(String partition, long[] values, long[] shape, boolean jagged, int write) {}

  /** Metadata kept for a later replay, with the write each of its samples had when it was made. */
  private record Kept(BatchMeta meta, int[] writes) {}

  private final Map<Sample, Cell> cells = new HashMap<>();
  private final Map<String, Sample> keys = new LinkedHashMap<>();
  private final List<Kept> kept = new ArrayList<>();
  private int writes;
  private Random random;
  private String context;

  @ParameterizedTest
  @EnumSource(Backend.class)
  void shouldReadWhatWasWrittenForEachSampleOrFailTyped(
      Backend backend, BufferAllocator allocator) {
    long seed = Seeds.seed();
    random = new Random(seed);
    try (TestSystem tq = deployment.fresh(backend)) {
      for (int step = 0; step < STEPS; step++) {
        context = deployment + "/" + backend + " seed=" + seed + " step=" + step;
        step(tq, allocator);
      }
    } catch (AssertionError e) {
      throw new AssertionError(context + ": " + e.getMessage(), e);
    }
  }

  private void step(TestSystem tq, BufferAllocator allocator) {
    int op = random.nextInt(100);
    if (op < 22) {
      putNew(tq, allocator);
    } else if (op < 32) {
      keep(tq.client().getMeta(GetMetadataRequest.forceFetch(partition(), List.of("x"))));
    } else if (op < 38) {
      keep(tq.client().getMeta(GetMetadataRequest.fetch(partition(), List.of("x"), "task", 1)));
    } else if (op < 46 && !kept.isEmpty()) {
      clearSamples(tq, pickKept());
    } else if (op < 50) {
      clearPartition(tq, random.nextInt(5) == 0 ? KV : partition());
    } else if (op < 62) {
      kvPut(tq, allocator);
    } else if (op < 67) {
      kvClear(tq);
    } else if (op < 74) {
      kvGet(tq);
    } else if (op < 88 && !kept.isEmpty()) {
      read(tq, pickKept());
    } else if (!kept.isEmpty()) {
      rewrite(tq, pickKept(), allocator);
    } else {
      putNew(tq, allocator);
    }
  }

  private String partition() {
    return PARTITIONS.get(random.nextInt(PARTITIONS.size()));
  }

  private Kept pickKept() {
    return kept.get(random.nextInt(kept.size()));
  }

  // ---- operations --------------------------------------------------------------------------

  private void putNew(TestSystem tq, BufferAllocator allocator) {
    String partition = partition();
    int rows = 1 + random.nextInt(3);
    Data rowsData = rows(rows);
    try (Batch data = rowsData.batch(allocator)) {
      BatchMeta meta = tq.client().put(data, partition);
      record(meta, rowsData, partition);
      keep(meta);
    }
  }

  private void rewrite(TestSystem tq, Kept target, BufferAllocator allocator) {
    BatchMeta meta = target.meta();
    if (meta.isEmpty()) {
      return;
    }
    List<Integer> dead = deadPositions(meta);
    Data rowsData = rows(meta.size());
    try (Batch data = rowsData.batch(allocator)) {
      BatchMeta written;
      try {
        written = tq.client().put(data, meta);
      } catch (TqException e) {
        assertThat(dead).as("a put through live metadata failed: %s", e).isNotEmpty();
        assertThat(e.code()).as("%s", e).isEqualTo(ErrorCode.STALE_METADATA);
        return;
      }
      assertThat(dead).as("a put through metadata of cleared samples succeeded").isEmpty();
      for (int i = 0; i < meta.size(); i++) {
        Sample sample = new Sample(meta.globalIndex(i), meta.generation(i));
        Cell old = cells.get(sample);
        cells.put(sample, rowsData.cell(i, old.partition(), ++writes));
      }
      keep(written);
    }
  }

  private void clearSamples(TestSystem tq, Kept target) {
    BatchMeta meta = target.meta();
    tq.client().clearSamples(meta);
    for (int i = 0; i < meta.size(); i++) {
      Sample sample = new Sample(meta.globalIndex(i), meta.generation(i));
      Cell cell = cells.get(sample);
      if (cell != null && cell.partition().equals(meta.partitionId(i))) {
        forget(sample);
      }
    }
  }

  private void clearPartition(TestSystem tq, String partition) {
    tq.client().clearPartition(partition);
    List<Sample> gone = new ArrayList<>();
    cells.forEach(
        (sample, cell) -> {
          if (cell.partition().equals(partition)) {
            gone.add(sample);
          }
        });
    gone.forEach(this::forget);
  }

  private void forget(Sample sample) {
    cells.remove(sample);
    keys.values().remove(sample);
  }

  private void kvPut(TestSystem tq, BufferAllocator allocator) {
    String key = KEYS.get(random.nextInt(KEYS.size()));
    Data rowsData = rows(1);
    try (Batch data = rowsData.batch(allocator)) {
      tq.kv().put(key, KV, data, null);
    }
    BatchMeta meta = tq.client().resolveKeys(KV, List.of(key), false);
    assertThat(meta.size()).isEqualTo(1);
    Sample sample = new Sample(meta.globalIndex(0), meta.generation(0));
    Sample before = keys.get(key);
    if (before != null) {
      assertThat(sample).as("a key keeps its sample while it exists").isEqualTo(before);
    }
    keys.put(key, sample);
    cells.put(sample, rowsData.cell(0, KV, ++writes));
    keep(meta);
  }

  private void kvClear(TestSystem tq) {
    String key = KEYS.get(random.nextInt(KEYS.size()));
    tq.kv().clear(List.of(key), KV);
    Sample sample = keys.remove(key);
    if (sample != null) {
      cells.remove(sample);
    }
  }

  private void kvGet(TestSystem tq) {
    String key = KEYS.get(random.nextInt(KEYS.size()));
    Sample sample = keys.get(key);
    try (Batch rows = tq.kv().batchGet(List.of(key), KV, List.of("x"))) {
      assertThat(sample).as("a read of key %s that does not exist succeeded", key).isNotNull();
      checkRows(rows.column("x"), List.of(cells.get(sample)), true);
    } catch (TqException e) {
      assertThat(sample).as("a read of existing key %s failed: %s", key, e).isNull();
      assertThat(e.code()).isIn(ErrorCode.UNKNOWN_KEY, ErrorCode.UNKNOWN_FIELD);
    }
  }

  private void read(TestSystem tq, Kept target) {
    BatchMeta meta = target.meta();
    if (meta.isEmpty()) {
      return;
    }
    List<Integer> dead = deadPositions(meta);
    Batch rows;
    try {
      rows = tq.client().getData(meta.selectFields(List.of("x")));
    } catch (TqException e) {
      assertThat(dead).as("a read of live samples failed: %s", e).isNotEmpty();
      assertThat(e.code()).as("%s", e).isEqualTo(ErrorCode.STALE_METADATA);
      return;
    }
    try (rows) {
      assertThat(dead)
          .as("a read through metadata of cleared samples %s returned data", dead)
          .isEmpty();
      List<Cell> expected = new ArrayList<>();
      boolean current = true;
      for (int i = 0; i < meta.size(); i++) {
        Cell cell = cells.get(new Sample(meta.globalIndex(i), meta.generation(i)));
        expected.add(cell);
        current &= target.writes()[i] == cell.write();
      }
      checkRows(rows.column("x"), expected, current);
    }
  }

  private List<Integer> deadPositions(BatchMeta meta) {
    List<Integer> dead = new ArrayList<>();
    for (int i = 0; i < meta.size(); i++) {
      Cell cell = cells.get(new Sample(meta.globalIndex(i), meta.generation(i)));
      if (cell == null || !cell.partition().equals(meta.partitionId(i))) {
        dead.add(i);
      }
    }
    return dead;
  }

  private void keep(BatchMeta meta) {
    if (meta.isEmpty() || !meta.fieldSchema().containsKey("x")) {
      return;
    }
    int[] seen = new int[meta.size()];
    for (int i = 0; i < meta.size(); i++) {
      Cell cell = cells.get(new Sample(meta.globalIndex(i), meta.generation(i)));
      assertThat(cell)
          .as("metadata from the controller names a sample the model lacks")
          .isNotNull();
      seen[i] = cell.write();
    }
    kept.add(new Kept(meta, seen));
    if (kept.size() > 24) {
      kept.remove(random.nextInt(kept.size()));
    }
  }

  private void record(BatchMeta meta, Data rowsData, String partition) {
    for (int i = 0; i < meta.size(); i++) {
      Sample sample = new Sample(meta.globalIndex(i), meta.generation(i));
      assertThat(cells).as("a fresh sample reuses a live one").doesNotContainKey(sample);
      cells.put(sample, rowsData.cell(i, partition, ++writes));
    }
  }

  /**
   * The values of every row always; the shape of every row and the column's kind when the metadata
   * read through was made after each sample's last write.
   */
  private static void checkRows(Column column, List<Cell> expected, boolean current) {
    assertThat(column.rowCount()).isEqualTo(expected.size());
    for (int r = 0; r < expected.size(); r++) {
      long[] values = Eq.longs(column, r);
      if (!Arrays.equals(values, expected.get(r).values())) {
        fail(
            "row %d holds %s, the last write of its sample was %s",
            r, Arrays.toString(values), Arrays.toString(expected.get(r).values()));
      }
    }
    if (!current) {
      return;
    }
    boolean dense = true;
    for (Cell cell : expected) {
      dense &= !cell.jagged() && Arrays.equals(cell.shape(), expected.getFirst().shape());
    }
    assertThat(column.kind()).isEqualTo(dense ? ColumnKind.DENSE : ColumnKind.JAGGED);
    List<List<Long>> shapes = Rows.rowShapes(column);
    for (int r = 0; r < expected.size(); r++) {
      assertThat(shapes.get(r))
          .as("shape of row %d", r)
          .containsExactly(Arrays.stream(expected.get(r).shape()).boxed().toArray(Long[]::new));
    }
  }

  // ---- data --------------------------------------------------------------------------------

  /** Random rows of field {@code x}: a dense column of one width, or a jagged one. */
  private Data rows(int count) {
    boolean jagged = random.nextBoolean();
    int width = 1 + random.nextInt(3);
    long[][] values = new long[count][];
    for (int r = 0; r < count; r++) {
      values[r] = new long[jagged ? 1 + random.nextInt(3) : width];
      for (int k = 0; k < values[r].length; k++) {
        values[r][k] = random.nextInt(1_000_000);
      }
    }
    return new Data(values, jagged);
  }

  private record Data(long[][] values, boolean jagged) {
    Batch batch(BufferAllocator allocator) {
      long[] flat = Arrays.stream(values).flatMapToLong(Arrays::stream).toArray();
      if (!jagged) {
        Tensor dense =
            Tensor.ofLongs(allocator, DType.INT64, flat, values.length, values[0].length);
        return Batch.builder().dense("x", dense).build();
      }
      List<long[]> shapes = new ArrayList<>();
      for (long[] row : values) {
        shapes.add(new long[] {row.length});
      }
      Tensor all = Tensor.ofLongs(allocator, DType.INT64, flat, flat.length);
      return Batch.builder().add("x", JaggedColumn.fromValues(all, shapes)).build();
    }

    Cell cell(int row, String partition, int write) {
      return new Cell(
          partition, values[row].clone(), new long[] {values[row].length}, jagged, write);
    }
  }
}
