package org.transferqueue.server.stress;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.transferqueue.Clock;
import org.transferqueue.TqException;
import org.transferqueue.client.KvApi;
import org.transferqueue.client.MetaClient;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * One stress client, run on its own virtual thread: until the deadline, each iteration puts a batch
 * of checksummed rows into the client's own partition, fetches it back through the controller's
 * sampler (which marks it consumed), gets the data, verifies every row and clears the samples; then
 * does the same on the partition shared by all clients, where the fetched rows are usually other
 * clients' and are matched against the {@link SharedLedger}; then puts rows under keys of the
 * key-value partition all clients share, reads them back by key and clears the keys.
 *
 * <p>A batch has three fields: {@code payload} ({@code uint8 [rows, width]}, see {@link
 * StressPayload}), {@code tag} ({@code int64 [rows, 2]}: client id and sequence) and {@code note}
 * (a string {@code c<id>/s<sequence>} per row), so a row whose fields come from different samples
 * is caught too. An error ends the iteration: it is counted by code, the client's own partition is
 * cleared, and the next iteration starts afresh. Not thread-safe: one thread runs it.
 */
final class StressClient implements Runnable {
  static final String TASK = "stress";
  static final List<String> FIELDS = List.of("note", "payload", "tag");

  private final int id;
  private final MetaClient client;
  private final KvApi kv;
  private final BufferAllocator allocator;
  private final StressPlan plan;
  private final StressStats stats;
  private final SharedLedger ledger;
  private final Clock nanoClock;
  private final long deadlineNanos;
  private final SplittableRandom random;
  private final String ownPartition;
  private final String sharedPartition;
  private final String kvPartition;
  private final int ownWidth;
  // Owned by the running thread.
  private long nextSequence;
  private long iterations;

  StressClient(
      int id,
      MetaClient client,
      KvApi kv,
      BufferAllocator allocator,
      StressPlan plan,
      StressStats stats,
      SharedLedger ledger,
      Clock nanoClock,
      long deadlineNanos,
      String runTag) {
    this.id = id;
    this.client = client;
    this.kv = kv;
    this.allocator = allocator;
    this.plan = plan;
    this.stats = stats;
    this.ledger = ledger;
    this.nanoClock = nanoClock;
    this.deadlineNanos = deadlineNanos;
    this.random = new SplittableRandom(plan.seed() * 1_000_003L + id);
    this.ownPartition = "stress_" + runTag + "_own_" + id;
    this.sharedPartition = sharedPartition(runTag);
    this.kvPartition = kvPartition(runTag);
    this.ownWidth = plan.ownWidth(id);
  }

  /** The partition all clients of a run put to and fetch from. */
  static String sharedPartition(String runTag) {
    return "stress_" + runTag + "_shared";
  }

  /** The key-value partition all clients of a run share. */
  static String kvPartition(String runTag) {
    return "stress_" + runTag + "_kv";
  }

  /** Iterations this client completed (own, shared and key-value partition count one each). */
  long iterations() {
    return iterations;
  }

  @Override
  public void run() {
    while (nanoClock.nanoTime() - deadlineNanos < 0) {
      if (plan.flows().contains(StressFlow.OWN)) {
        if (guarded(this::ownIteration)) {
          iterations++;
        } else {
          guarded(() -> client.clearPartition(ownPartition));
        }
      }
      if (plan.flows().contains(StressFlow.SHARED) && guarded(this::sharedIteration)) {
        iterations++;
      }
      if (plan.flows().contains(StressFlow.KV) && guarded(this::kvIteration)) {
        iterations++;
      }
    }
    guarded(() -> client.clearPartition(ownPartition));
  }

  /** Runs a step, counting any error by code; true when it completed. */
  private boolean guarded(Runnable step) {
    try {
      step.run();
      return true;
    } catch (TqException e) {
      stats.error(e.code().name(), "client " + id + ": " + e.getMessage());
    } catch (RuntimeException e) {
      stats.error(e.getClass().getSimpleName(), "client " + id + ": " + e);
    }
    return false;
  }

  private void ownIteration() {
    long first = nextSequence;
    nextSequence += plan.rows();
    BatchMeta written = put(ownPartition, ownWidth, first);
    Map<Long, Long> expected = new HashMap<>();
    for (int i = 0; i < written.size(); i++) {
      expected.put(written.globalIndex(i), first + i);
    }
    BatchMeta fetched = fetch(ownPartition);
    long start = nanoClock.nanoTime();
    try (Batch read = client.getData(fetched)) {
      stats.operation(StressOp.GET, nanoClock.nanoTime() - start, bytes(read));
      for (int p = 0; p < read.rowCount(); p++) {
        long globalIndex = fetched.globalIndex(p);
        Long sequence = expected.remove(globalIndex);
        String where = ownPartition + " index " + globalIndex;
        if (sequence == null) {
          stats.corrupted(where + ": fetched a sample this client did not just write");
        } else if (plan.verify()) {
          verifyRow(read, p, ownWidth, where, id, sequence);
        }
      }
    }
    if (!expected.isEmpty()) {
      stats.lost(expected.size(), ownPartition + ": indexes " + expected.keySet() + " not fetched");
    }
    clear(fetched);
  }

  private void sharedIteration() {
    long first = nextSequence;
    nextSequence += plan.rows();
    if (plan.verify()) {
      ledger.announce(id, first, plan.rows());
    }
    BatchMeta written;
    try {
      written = put(sharedPartition, plan.valueBytes(), first);
    } catch (RuntimeException e) {
      if (plan.verify()) {
        ledger.failed(id, first, plan.rows());
      }
      throw e;
    }
    if (plan.verify()) {
      ledger.placed(id, first, written.globalIndexes());
    }
    BatchMeta fetched = fetch(sharedPartition);
    long start = nanoClock.nanoTime();
    try (Batch read = client.getData(fetched)) {
      stats.operation(StressOp.GET, nanoClock.nanoTime() - start, bytes(read));
      if (plan.verify()) {
        verifyShared(read, fetched);
      }
    }
    clear(fetched);
  }

  /**
   * Puts rows under this client's keys of the key-value partition all clients share, reads them
   * back by key (rows in key order) and clears the keys.
   */
  private void kvIteration() {
    long first = nextSequence;
    nextSequence += plan.rows();
    List<String> keys = new ArrayList<>(plan.rows());
    List<Map<String, Object>> tags = new ArrayList<>(plan.rows());
    for (int i = 0; i < plan.rows(); i++) {
      keys.add(note(id, first + i));
      tags.add(Map.of("sequence", first + i));
    }
    try (Batch batch = batch(plan.valueBytes(), first)) {
      long start = nanoClock.nanoTime();
      kv.batchPut(keys, kvPartition, batch, tags);
      stats.operation(StressOp.KV_PUT, nanoClock.nanoTime() - start, bytes(batch));
      stats.written(batch.rowCount());
    }
    long start = nanoClock.nanoTime();
    try (Batch read = kv.batchGet(keys, kvPartition, null)) {
      stats.operation(StressOp.KV_GET, nanoClock.nanoTime() - start, bytes(read));
      if (read.rowCount() != keys.size()) {
        stats.lost(
            Math.max(0, keys.size() - read.rowCount()),
            kvPartition + ": a get of " + keys.size() + " keys returned " + read.rowCount());
      }
      if (plan.verify()) {
        for (int p = 0; p < Math.min(read.rowCount(), keys.size()); p++) {
          verifyRow(read, p, plan.valueBytes(), kvPartition + " key " + keys.get(p), id, first + p);
        }
      }
    }
    start = nanoClock.nanoTime();
    kv.clear(keys, kvPartition);
    stats.operation(StressOp.KV_CLEAR, nanoClock.nanoTime() - start, 0);
  }

  private BatchMeta put(String partition, int width, long firstSequence) {
    try (Batch batch = batch(width, firstSequence)) {
      long start = nanoClock.nanoTime();
      BatchMeta written = client.put(batch, partition);
      stats.operation(StressOp.PUT, nanoClock.nanoTime() - start, bytes(batch));
      stats.written(batch.rowCount());
      return written;
    }
  }

  private BatchMeta fetch(String partition) {
    GetMetadataRequest request =
        GetMetadataRequest.fetch(partition, FIELDS, TASK, plan.rows())
            .withTimeout(plan.opTimeout());
    long start = nanoClock.nanoTime();
    BatchMeta fetched = client.getMeta(request);
    stats.operation(StressOp.FETCH, nanoClock.nanoTime() - start, 0);
    if (fetched.size() != plan.rows()) {
      // A blocking fetch returns its batch size or fails; rows it did not return stay ready
      // (the own flow and the drain count them as lost if nobody reads them).
      stats.error(
          "FETCH_SIZE_MISMATCH",
          partition + ": a blocking fetch of " + plan.rows() + " returned " + fetched.size());
    }
    return fetched;
  }

  private void clear(BatchMeta fetched) {
    long start = nanoClock.nanoTime();
    client.clearSamples(fetched);
    stats.operation(StressOp.CLEAR, nanoClock.nanoTime() - start, 0);
  }

  private void verifyShared(Batch read, BatchMeta fetched) {
    for (int p = 0; p < read.rowCount(); p++) {
      long globalIndex = fetched.globalIndex(p);
      String where = sharedPartition + " index " + globalIndex;
      MemorySegment row = payloadRow(read, p, plan.valueBytes(), where);
      if (row == null) {
        continue;
      }
      long writer = StressPayload.clientId(row);
      long sequence = StressPayload.sequence(row);
      if (!verifyRow(read, p, plan.valueBytes(), where, writer, sequence)) {
        continue;
      }
      switch (ledger.claim(writer, sequence, globalIndex)) {
        case OK, UNCERTAIN -> {}
        case NOT_PENDING ->
            stats.corrupted(
                where + ": row of client " + writer + " sequence " + sequence + " read twice");
        case WRONG_INDEX ->
            stats.corrupted(
                where
                    + ": row of client "
                    + writer
                    + " sequence "
                    + sequence
                    + " was put under another index");
      }
    }
  }

  /** Checks every field of row {@code p}; true when all agree with the expected writer. */
  private boolean verifyRow(Batch read, int p, int width, String where, long writer, long seq) {
    try {
      MemorySegment row = payloadRow(read, p, width, where);
      if (row == null) {
        return false;
      }
      StressPayload.Verdict verdict = StressPayload.check(row);
      if (verdict != StressPayload.Verdict.OK) {
        stats.corrupted(where + ": payload " + verdict);
        return false;
      }
      if (StressPayload.clientId(row) != writer || StressPayload.sequence(row) != seq) {
        stats.corrupted(
            where
                + ": payload of client "
                + StressPayload.clientId(row)
                + " sequence "
                + StressPayload.sequence(row)
                + ", expected client "
                + writer
                + " sequence "
                + seq);
        return false;
      }
      Tensor tag = ((DenseColumn) read.column("tag")).tensor();
      Object note = ((ObjectColumn) read.column("note")).values().get(p);
      if (tag.getLong(2L * p) != writer
          || tag.getLong(2L * p + 1) != seq
          || !note(writer, seq).equals(note)) {
        stats.corrupted(
            where
                + ": fields disagree: payload client "
                + writer
                + " sequence "
                + seq
                + ", tag ["
                + tag.getLong(2L * p)
                + ", "
                + tag.getLong(2L * p + 1)
                + "], note "
                + note);
        return false;
      }
      stats.verified(1);
      return true;
    } catch (RuntimeException e) {
      stats.corrupted(where + ": unreadable row: " + e);
      return false;
    }
  }

  /** The payload bytes of row {@code p}, or null (counted as corrupted) when the shape is wrong. */
  private MemorySegment payloadRow(Batch read, int p, int width, String where) {
    Column column = read.column("payload");
    if (!(column instanceof DenseColumn dense)
        || dense.dtype() != DType.UINT8
        || dense.rowShape().length != 1
        || dense.rowShape()[0] != width) {
      stats.corrupted(
          where + ": payload column is " + column + ", expected uint8 rows of " + width);
      return null;
    }
    return dense.tensor().segment().asSlice((long) p * width, width);
  }

  /** A new batch of checksummed rows; the caller owns it. */
  private Batch batch(int width, long firstSequence) {
    int rows = plan.rows();
    List<Column> made = new ArrayList<>(2);
    try {
      Tensor payload = Tensor.allocate(allocator, DType.UINT8, rows, width);
      made.add(new DenseColumn(payload));
      Tensor tag = Tensor.allocate(allocator, DType.INT64, rows, 2);
      made.add(new DenseColumn(tag));
      List<String> notes = new ArrayList<>(rows);
      for (int i = 0; i < rows; i++) {
        long sequence = firstSequence + i;
        StressPayload.fill(
            payload.segment().asSlice((long) i * width, width), id, sequence, random);
        tag.setLong(2L * i, id);
        tag.setLong(2L * i + 1, sequence);
        notes.add(note(id, sequence));
      }
      return Batch.builder()
          .rowCount(rows)
          .add("payload", made.get(0))
          .add("tag", made.get(1))
          .add("note", new ObjectColumn(notes))
          .build();
    } catch (RuntimeException e) {
      made.forEach(Column::close);
      throw e;
    }
  }

  private static String note(long clientId, long sequence) {
    return "c" + clientId + "/s" + sequence;
  }

  /** Tensor bytes plus the UTF-8 bytes of strings. */
  static long bytes(Batch batch) {
    long total = 0;
    for (String field : batch.fields()) {
      total +=
          switch (batch.column(field)) {
            case DenseColumn dense -> dense.tensor().nbytes();
            case ObjectColumn objects -> {
              long sum = 0;
              for (Object value : objects.values()) {
                sum += value == null ? 0 : value.toString().getBytes(StandardCharsets.UTF_8).length;
              }
              yield sum;
            }
            case JaggedColumn jagged -> jagged.values().nbytes();
          };
    }
    return total;
  }
}
