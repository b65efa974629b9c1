package org.transferqueue.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * What every {@link StorageManager} must do, whatever its backend. A backend's test extends this
 * class and supplies {@link #create}; every test runs with a leak-checking allocator.
 */
@ExtendWith(LeakCheckExtension.class)
public abstract class StorageManagerContract {

  /** Records updates; rejects them while {@link #reject} is set. */
  protected static final class Notifications implements ProductionNotifier {
    /** Accepted updates, in order. */
    public final List<ProductionUpdate> accepted = new CopyOnWriteArrayList<>();

    /** Whether to reject updates. */
    public final AtomicBoolean reject = new AtomicBoolean();

    @Override
    public void notifyProduced(ProductionUpdate update) {
      if (reject.get()) {
        throw new TqException(ErrorCode.SCHEMA_CONFLICT, "rejected by the test controller");
      }
      accepted.add(update);
    }
  }

  /**
   * Creates the manager under test.
   *
   * @param allocator the test's leak-checking allocator
   * @param notifier where the manager must report production
   * @return a manager the test closes
   */
  protected abstract StorageManager create(BufferAllocator allocator, ProductionNotifier notifier);

  private static BatchMeta meta(List<String> fields, List<String> partitions, long... gis) {
    BatchMeta.Builder builder = BatchMeta.builder().globalIndexes(gis).partitionIds(partitions);
    fields.forEach(f -> builder.field(f, FieldSchema.placeholder()));
    return builder.build();
  }

  private static BatchMeta meta(List<String> fields, long... gis) {
    List<String> partitions = new ArrayList<>();
    for (int i = 0; i < gis.length; i++) {
      partitions.add("p");
    }
    return meta(fields, partitions, gis);
  }

  private static Batch sample(BufferAllocator allocator) {
    Tensor a = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {1}, 1);
    Tensor b = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {2, 3}, 2);
    Tensor c = Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {}, 0);
    try (a;
        b;
        c) {
      return Batch.builder()
          .dense(
              "dense", Tensor.ofLongs(allocator, DType.INT64, new long[] {1, 2, 3, 4, 5, 6}, 3, 2))
          .dense("scalars", Tensor.ofFloats(allocator, DType.FLOAT32, new float[] {7, 8, 9}, 3))
          .add("jagged", JaggedColumn.copyOf(allocator, DType.FLOAT32, List.of(a, b, c)))
          .objects("objects", java.util.Arrays.asList("x", null, List.of(1L, "y")))
          .build();
    }
  }

  @Test
  void shouldReturnEveryColumnKindInMetadataOrder(BufferAllocator allocator) {
    Notifications notifications = new Notifications();
    try (StorageManager manager = create(allocator, notifications);
        Batch batch = sample(allocator)) {
      manager.put(batch, meta(List.of(), 10, 11, 12));

      List<String> fields = List.of("dense", "jagged", "objects", "scalars");
      try (Batch read = manager.get(meta(fields, 12, 10, 11), allocator);
          Batch expected = batch.selectRows(allocator, new int[] {2, 0, 1})) {
        assertThat(read.fields()).containsExactlyElementsOf(fields);
        for (String field : fields) {
          assertThat(read.column(field).kind()).as(field).isEqualTo(expected.column(field).kind());
          assertThat(read.column(field).contentEquals(expected.column(field))).as(field).isTrue();
        }
        assertThat(((DenseColumn) read.column("scalars")).tensor().shape()).containsExactly(3);
      }
    }
  }

  @Test
  void shouldNotifyOncePerPartitionWithTheDataSchema(BufferAllocator allocator) {
    Notifications notifications = new Notifications();
    try (StorageManager manager = create(allocator, notifications);
        Batch batch = sample(allocator)) {
      manager.put(batch, meta(List.of(), List.of("a", "b", "a"), 10, 11, 12));

      assertThat(notifications.accepted).hasSize(2);
      ProductionUpdate first = notifications.accepted.get(0);
      assertThat(first.partitionId()).isEqualTo("a");
      assertThat(first.indexes()).containsExactly(10L, 12L);
      assertThat(first.fields().get("dense")).isEqualTo(FieldSchema.regular(DType.INT64, 2));
      assertThat(first.fields().get("scalars")).isEqualTo(FieldSchema.regular(DType.FLOAT32));
      assertThat(first.fields().get("objects").nonTensor()).isTrue();
      assertThat(first.fields().get("jagged").perSampleShapes())
          .containsExactly(List.of(1L), List.of(0L));
      assertThat(notifications.accepted.get(1).indexes()).containsExactly(11L);
    }
  }

  @Test
  void shouldFailWithNotificationFailedWhenTheControllerRejects(BufferAllocator allocator) {
    Notifications notifications = new Notifications();
    notifications.reject.set(true);
    try (StorageManager manager = create(allocator, notifications);
        Batch batch = sample(allocator)) {
      assertThatThrownBy(() -> manager.put(batch, meta(List.of(), 10, 11, 12)))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NOTIFICATION_FAILED))
          .hasRootCauseMessage("rejected by the test controller");
    }
  }

  @Test
  void shouldRejectARowCountDifferentFromTheMetadataBeforeWriting(BufferAllocator allocator) {
    Notifications notifications = new Notifications();
    try (StorageManager manager = create(allocator, notifications);
        Batch batch = sample(allocator)) {
      assertThatThrownBy(() -> manager.put(batch, meta(List.of(), 10, 11)))
          .isInstanceOf(TqException.class)
          .hasMessageContaining("Batch size of data (3) does not match expected (2)");
      assertThat(notifications.accepted).isEmpty();
      assertThatThrownBy(() -> manager.get(meta(List.of("dense"), 10), allocator))
          .isInstanceOf(TqException.class);
    }
  }

  @Test
  void shouldTreatEmptyMetadataAsANoOp(BufferAllocator allocator) {
    Notifications notifications = new Notifications();
    try (StorageManager manager = create(allocator, notifications);
        Batch empty = Batch.builder().rowCount(0).build()) {
      manager.put(empty, BatchMeta.empty());
      try (Batch read = manager.get(BatchMeta.empty(), allocator)) {
        assertThat(read.rowCount()).isZero();
      }
      assertThat(manager.clear(BatchMeta.empty()).isComplete()).isTrue();
      assertThat(notifications.accepted).isEmpty();
    }
  }

  @Test
  void shouldReturnCopiesIndependentOfStoredData(BufferAllocator allocator) {
    try (StorageManager manager = create(allocator, new Notifications());
        Batch batch = sample(allocator)) {
      manager.put(batch, meta(List.of(), 10, 11, 12));
      ((DenseColumn) batch.column("dense")).tensor().setLong(0, 100);

      try (Batch read = manager.get(meta(List.of("dense"), 10), allocator)) {
        assertThat(((DenseColumn) read.column("dense")).tensor().getLong(0)).isEqualTo(1);
        ((DenseColumn) read.column("dense")).tensor().setLong(1, -5);
      }
      try (Batch again = manager.get(meta(List.of("dense"), 10), allocator)) {
        assertThat(((DenseColumn) again.column("dense")).tensor().toLongArray())
            .containsExactly(1, 2);
      }
    }
  }

  @Test
  void shouldForgetClearedSamples(BufferAllocator allocator) {
    try (StorageManager manager = create(allocator, new Notifications());
        Batch batch = sample(allocator)) {
      manager.put(batch, meta(List.of(), 10, 11, 12));

      ClearResult result =
          manager.clear(meta(List.of("dense", "jagged", "objects", "scalars"), 10, 12));

      assertThat(result.isComplete()).isTrue();
      assertThatThrownBy(() -> manager.get(meta(List.of("objects"), 10), allocator))
          .isInstanceOf(TqException.class);
      try (Batch kept = manager.get(meta(List.of("objects"), 11), allocator)) {
        assertThat(kept.column("objects").kind()).isEqualTo(ColumnKind.OBJECT);
        assertThat(((ObjectColumn) kept.column("objects")).get(0)).isNull();
      }
    }
  }
}
