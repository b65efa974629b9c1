package org.transferqueue.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;
import org.transferqueue.Closeables;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;

/**
 * One micro-batch of a {@link StreamingLoader}: its rows and the metadata of exactly those rows.
 *
 * <p>Row {@code i} of {@link #batch()} is the sample {@code meta().globalIndex(i)}: the metadata
 * always describes the rows of its own micro-batch, also for the last, smaller micro-batch of a
 * batch whose size is not a multiple of the micro-batch size. Write results back with {@code
 * client.put(output, microBatch.meta())}.
 *
 * <p>Ownership: the micro-batch owns its {@link Batch}. The consumer may close it as soon as it is
 * done; otherwise the loader closes it when the consumer takes the next micro-batch, or when the
 * loader is reset, stepped or closed. Copy what must outlive that. Closing is idempotent. Not
 * thread-safe; one consumer at a time.
 */
public final class MicroBatch implements AutoCloseable {
  private final BatchMeta meta;
  private final Batch batch;
  private final int batchIndex;
  private final int microIndex;
  private final int attempt;
  private final long itemId;
  private final LongConsumer acknowledger;
  private final AutoCloseable release;
  private final AtomicBoolean closed = new AtomicBoolean();

  MicroBatch(
      BatchMeta meta,
      Batch batch,
      int batchIndex,
      int microIndex,
      int attempt,
      long itemId,
      LongConsumer acknowledger) {
    this(meta, batch, batchIndex, microIndex, attempt, itemId, acknowledger, null);
  }

  /**
   * A micro-batch that also releases {@code release} (the batch its rows are views of) when closed.
   */
  MicroBatch(
      BatchMeta meta,
      Batch batch,
      int batchIndex,
      int microIndex,
      int attempt,
      long itemId,
      LongConsumer acknowledger,
      AutoCloseable release) {
    this.release = release;
    this.meta = Objects.requireNonNull(meta, "meta");
    this.batch = Objects.requireNonNull(batch, "batch");
    this.batchIndex = batchIndex;
    this.microIndex = microIndex;
    this.attempt = attempt;
    this.itemId = itemId;
    this.acknowledger = acknowledger;
  }

  /**
   * Splits a batch and its metadata into micro-batches of {@code microBatchSize} consecutive rows
   * (the last one holds the remainder): 7 rows with micro size 3 give 3, 3 and 1 rows, each with
   * the metadata of exactly its rows.
   *
   * @param batch the rows (only read; the caller keeps it)
   * @param meta the metadata of {@code batch}'s rows, in the same order
   * @param microBatchSize rows per micro-batch, at least 1 and at most {@code batch.rowCount()}
   * @param allocator where the micro-batches' copies of the rows are allocated
   * @return the micro-batches in row order; the caller owns and must close them
   * @throws TqException with {@code INVALID_ARGUMENT} for a micro size below 1 or above the row
   *     count, {@code SHAPE_MISMATCH} when the metadata has another number of samples than rows
   */
  public static List<MicroBatch> split(
      Batch batch, BatchMeta meta, int microBatchSize, BufferAllocator allocator) {
    Objects.requireNonNull(batch, "batch");
    Objects.requireNonNull(meta, "meta");
    Objects.requireNonNull(allocator, "allocator");
    if (batch.rowCount() != meta.size()) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "batch has " + batch.rowCount() + " rows but the metadata " + meta.size() + " samples");
    }
    if (microBatchSize < 1 || microBatchSize > batch.rowCount()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "micro_batch_size="
              + microBatchSize
              + " must be in [1, "
              + batch.rowCount()
              + "] (the batch's row count)");
    }
    List<MicroBatch> out = new ArrayList<>();
    try {
      int micro = 0;
      for (int[] range : ranges(batch.rowCount(), microBatchSize)) {
        int[] positions = new int[range[1] - range[0]];
        for (int i = 0; i < positions.length; i++) {
          positions[i] = range[0] + i;
        }
        Batch rows = batch.selectRows(allocator, positions);
        out.add(new MicroBatch(meta.selectSamples(positions), rows, 0, micro++, 1, -1, id -> {}));
      }
    } catch (RuntimeException e) {
      out.forEach(MicroBatch::close);
      throw e;
    }
    return out;
  }

  /**
   * The row ranges {@code [from, to)} of consecutive micro-batches over {@code rows} rows.
   *
   * @param rows the row count
   * @param microBatchSize rows per micro-batch, at least 1
   * @return the ranges; the last holds the remainder
   */
  static List<int[]> ranges(int rows, int microBatchSize) {
    List<int[]> out = new ArrayList<>((rows + microBatchSize - 1) / microBatchSize);
    for (int from = 0; from < rows; from += microBatchSize) {
      out.add(new int[] {from, Math.min(rows, from + microBatchSize)});
    }
    return out;
  }

  /**
   * The metadata of exactly this micro-batch's rows, in row order.
   *
   * @return the metadata
   */
  public BatchMeta meta() {
    return meta;
  }

  /**
   * The rows; valid until this micro-batch is closed.
   *
   * @return the batch, owned by this micro-batch
   * @throws TqException with {@code CLOSED} after {@link #close()}
   */
  public Batch batch() {
    if (closed.get()) {
      throw new TqException(
          ErrorCode.CLOSED,
          "micro-batch " + batchIndex + "." + microIndex + " is closed (the loader moved on)");
    }
    return batch;
  }

  /**
   * The loader's batch index (the {@code batch_index} sent to the sampler) of the global batch this
   * micro-batch belongs to.
   *
   * @return the batch index, from 0
   */
  public int batchIndex() {
    return batchIndex;
  }

  /**
   * The position of this micro-batch inside its global batch.
   *
   * @return the micro index, from 0
   */
  public int microIndex() {
    return microIndex;
  }

  /**
   * How many times these rows have been delivered: 1, or more after unacknowledged deliveries
   * expired.
   *
   * @return the delivery attempt, from 1
   */
  public int attempt() {
    return attempt;
  }

  /**
   * Marks this micro-batch as processed, so that it is not delivered again. Only meaningful when
   * the loader was built with an acknowledgement timeout; a no-op otherwise. Idempotent; may be
   * called after {@link #close()}.
   */
  public void ack() {
    acknowledger.accept(itemId);
  }

  /** Whether {@link #close()} has been called. */
  boolean isClosed() {
    return closed.get();
  }

  /** Closes the batch. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      Closeables.closeAll(Arrays.asList(batch, release));
    }
  }

  @Override
  public String toString() {
    return "MicroBatch[batch="
        + batchIndex
        + " micro="
        + microIndex
        + " attempt="
        + attempt
        + " indexes="
        + meta.globalIndexes()
        + "]";
  }
}
