package org.transferqueue.server.stress;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
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
 * is caught too. An error ends the iteration: it is counted by code, and the next iteration starts
 * afresh (on a new own partition when the old one may hold rows of a failed put).
 *
 * <p>Rows whose put was acknowledged must read back: when the fetch or the read after an
 * acknowledged put fails, the client reads the rows by their global indexes (the controller's
 * current metadata of the partition, then storage, consuming nothing) and counts those that are
 * gone as lost. In a chaos run ({@link Outages#retries()}) a call that failed because a role was
 * unreachable is retried, once the role answers again, until the recovery timeout; every failed
 * attempt is counted by code. Not thread-safe: one thread runs it.
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
  private final Outages outages;
  private final Clock nanoClock;
  private final long deadlineNanos;
  private final SplittableRandom random;
  private final String ownPartitionBase;
  private final String sharedPartition;
  private final String kvPartition;
  private final int ownWidth;
  // Owned by the running thread.
  private long nextSequence;
  private long iterations;
  private int ownEpoch;
  private final List<String> ownLeftovers = new ArrayList<>();

  StressClient(
      int id,
      MetaClient client,
      KvApi kv,
      BufferAllocator allocator,
      StressPlan plan,
      StressStats stats,
      SharedLedger ledger,
      Outages outages,
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
    this.outages = outages;
    this.nanoClock = nanoClock;
    this.deadlineNanos = deadlineNanos;
    this.random = new SplittableRandom(plan.seed() * 1_000_003L + id);
    this.ownPartitionBase = "stress_" + runTag + "_own_" + id;
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
          abandonOwnPartition();
        }
      }
      if (plan.flows().contains(StressFlow.SHARED) && guarded(this::sharedIteration)) {
        iterations++;
      }
      if (plan.flows().contains(StressFlow.KV) && guarded(this::kvIteration)) {
        iterations++;
      }
    }
    ownLeftovers.add(ownPartition());
    for (String partition : ownLeftovers) {
      guarded(() -> retrying(() -> clearPartition(partition)));
    }
  }

  /** The own partition of this epoch: a new one after each failed own iteration. */
  private String ownPartition() {
    return ownEpoch == 0 ? ownPartitionBase : ownPartitionBase + "_" + ownEpoch;
  }

  /**
   * Moves to a new own partition: the old one may hold rows of a put that failed (stored but not
   * acknowledged), which a fetch must not mistake for this epoch's. Clears the old one now if it
   * can, else after the run.
   */
  private void abandonOwnPartition() {
    String old = ownPartition();
    ownEpoch++;
    if (!guarded(() -> retrying(() -> clearPartition(old)))) {
      ownLeftovers.add(old);
    }
  }

  private Void clearPartition(String partition) {
    client.clearPartition(partition);
    return null;
  }

  /**
   * Runs a step, counting any error by code; true when it completed. In a chaos run an error that
   * says a role was unreachable waits until the role answers again before the next step.
   */
  private boolean guarded(Runnable step) {
    try {
      step.run();
      return true;
    } catch (TqException e) {
      stats.error(e.code().name(), "client " + id + ": " + e.getMessage());
      // A put whose production update hit a dead controller fails with NOTIFICATION_FAILED.
      if (Outages.unreachable(e) || e.code() == ErrorCode.NOTIFICATION_FAILED) {
        outages.awaitRetry(0, nanoClock.nanoTime());
      }
    } catch (RuntimeException e) {
      stats.error(e.getClass().getSimpleName(), "client " + id + ": " + e);
    }
    return false;
  }

  /**
   * Calls {@code call} until it succeeds; in a chaos run retries it after an error that says a role
   * was unreachable (counting each such error) until the recovery timeout, then throws the last
   * error. Only for calls that may run twice: reads, clears, checks.
   */
  private <T> T retrying(Supplier<T> call) {
    long since = 0;
    for (int attempt = 0; ; attempt++) {
      try {
        return call.get();
      } catch (TqException e) {
        if (!Outages.unreachable(e) || !outages.retries()) {
          throw e;
        }
        if (attempt == 0) {
          since = nanoClock.nanoTime();
        }
        if (!outages.awaitRetry(attempt, since)) {
          throw e;
        }
        stats.error(e.code().name(), "client " + id + " (retried): " + e.getMessage());
      }
    }
  }

  private void ownIteration() {
    String partition = ownPartition();
    long first = nextSequence;
    nextSequence += plan.rows();
    BatchMeta written = put(partition, ownWidth, first);
    Map<Long, Long> expected = new HashMap<>();
    for (int i = 0; i < written.size(); i++) {
      expected.put(written.globalIndex(i), first + i);
    }
    try {
      BatchMeta fetched = fetch(partition);
      long start = nanoClock.nanoTime();
      try (Batch read = retrying(() -> client.getData(fetched))) {
        stats.operation(StressOp.GET, nanoClock.nanoTime() - start, bytes(read));
        outages.succeeded(StressOp.GET, start, fetched);
        for (int p = 0; p < read.rowCount(); p++) {
          long globalIndex = fetched.globalIndex(p);
          Long sequence = expected.remove(globalIndex);
          String where = partition + " index " + globalIndex;
          if (sequence == null) {
            stats.corrupted(where + ": fetched a sample this client did not just write");
          } else if (plan.verify()) {
            verifyRow(read, p, ownWidth, where, id, sequence);
          }
        }
      }
    } catch (TqException e) {
      // The rows were acknowledged: whatever failed, they must still be there.
      stats.error(e.code().name(), "client " + id + ": " + e.getMessage());
    }
    if (!expected.isEmpty()) {
      recheck(partition, expected, ownWidth);
    }
    clear(written);
  }

  /**
   * Reads acknowledged rows of this client's own partition by global index without consuming them
   * (the controller's current metadata of the partition, then storage), verifies those found and
   * counts the rest as lost.
   *
   * @param expected global index to sequence; emptied
   */
  private void recheck(String partition, Map<Long, Long> expected, int width) {
    for (Map.Entry<Long, Long> e : readByIndex(partition, expected.keySet(), width).entrySet()) {
      long globalIndex = e.getKey();
      if (e.getValue() == SharedLedger.rowId(id, expected.get(globalIndex))) {
        expected.remove(globalIndex);
        stats.verified(1);
      }
    }
    if (!expected.isEmpty()) {
      stats.lost(
          expected.size(),
          partition + ": acknowledged rows at indexes " + expected.keySet() + " do not read back");
      expected.clear();
    }
  }

  /**
   * Which rows are at some global indexes of a partition, for the samples the controller reports
   * produced and storage returns whole (a row that fails its checksum or whose fields disagree
   * counts as corrupted), read without consuming anything; indexes with no such row are left out. A
   * row need not be the one the caller expects: after a controller lost its state an index may name
   * another sample.
   *
   * @return global index to the {@link SharedLedger#rowId} of the row found there
   */
  Map<Long, Long> readByIndex(String partition, Set<Long> indexes, int width) {
    Map<Long, Long> out = new HashMap<>();
    Optional<BatchMeta> all =
        retrying(() -> client.tryGetMeta(GetMetadataRequest.forceFetch(partition, FIELDS)));
    if (all.isEmpty()) {
      return out;
    }
    BatchMeta meta = all.get();
    List<Integer> positions = new ArrayList<>();
    for (int i = 0; i < meta.size(); i++) {
      if (indexes.contains(meta.globalIndex(i)) && meta.isProduced(i)) {
        positions.add(i);
      }
    }
    // One read per sample, so that one missing sample does not hide the others.
    for (int position : positions) {
      BatchMeta one = meta.selectSamples(position);
      String where = partition + " index " + one.globalIndex(0) + " (read by index)";
      try (Batch read = retrying(() -> client.getData(one))) {
        MemorySegment row = payloadRow(read, 0, width, where);
        if (row == null) {
          continue;
        }
        StressPayload.Verdict verdict = StressPayload.check(row);
        if (verdict != StressPayload.Verdict.OK) {
          stats.corrupted(where + ": payload " + verdict);
          continue;
        }
        long writer = StressPayload.clientId(row);
        long sequence = StressPayload.sequence(row);
        if (verifyFields(read, 0, where, writer, sequence)) {
          out.put(one.globalIndex(0), SharedLedger.rowId(writer, sequence));
        }
      } catch (TqException e) {
        stats.error(e.code().name(), "client " + id + ": " + where + ": " + e.getMessage());
      }
    }
    return out;
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
    BatchMeta fetched;
    try {
      fetched = fetch(sharedPartition);
    } catch (TqException e) {
      if (Outages.unreachable(e)) {
        ledger.mayHaveConsumed(plan.rows());
      }
      throw e;
    }
    long start = nanoClock.nanoTime();
    Batch read;
    try {
      read = retrying(() -> client.getData(fetched));
    } catch (TqException e) {
      // Consumed and not read: the rows stay pending, and the check after the run finds them.
      ledger.mayHaveConsumed(fetched.size());
      throw e;
    }
    try (read) {
      stats.operation(StressOp.GET, nanoClock.nanoTime() - start, bytes(read));
      outages.succeeded(StressOp.GET, start, fetched);
      if (plan.verify()) {
        verifyShared(read, fetched);
      }
    }
    clear(fetched);
  }

  /**
   * After the run: fetches what clients left ready in the shared partition (after an error stopped
   * a client between its put and its fetch) and claims it, then reads the rows still pending by
   * their global indexes: those found intact are stranded (consumed by a fetch whose reply was
   * lost), the rest are lost. Stranded rows beyond the {@link SharedLedger#strandedAllowance} are
   * lost too.
   */
  void drainShared(Duration wait) {
    try {
      while (ledger.unread() > 0) {
        // Answers empty when nothing is ready by the wait, instead of failing.
        Optional<BatchMeta> ready =
            retrying(
                () ->
                    client.tryGetMeta(
                        GetMetadataRequest.fetch(sharedPartition, FIELDS, TASK, 1)
                            .withTimeout(wait)));
        if (ready.isEmpty() || ready.get().isEmpty()) {
          break;
        }
        BatchMeta fetched = ready.get();
        try (Batch read = retrying(() -> client.getData(fetched))) {
          verifyShared(read, fetched);
        }
        clear(fetched);
      }
    } finally {
      checkPending();
    }
  }

  private void checkPending() {
    Map<Long, Long> pending = ledger.pendingByIndex();
    if (pending.isEmpty()) {
      return;
    }
    Map<Long, Long> found = readByIndex(sharedPartition, pending.keySet(), plan.valueBytes());
    found.forEach(
        (globalIndex, row) -> {
          if (row.equals(pending.get(globalIndex))
              && ledger.stranded(
                  SharedLedger.writer(row), SharedLedger.sequence(row), globalIndex)) {
            stats.verified(1);
          }
        });
    long beyond = ledger.strandedRows() - ledger.strandedAllowance();
    if (beyond > 0) {
      stats.lost(
          beyond,
          sharedPartition
              + ": "
              + ledger.strandedRows()
              + " rows read back by index but never delivered, more than the "
              + ledger.strandedAllowance()
              + " that failed fetches could have consumed");
    }
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
    try (Batch read = retrying(() -> kv.batchGet(keys, kvPartition, null))) {
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
    } catch (TqException e) {
      // The keys were acknowledged: find out, key by key, which ones are gone.
      stats.error(e.code().name(), "client " + id + ": " + e.getMessage());
      recheckKeys(keys, first);
    }
    start = nanoClock.nanoTime();
    retrying(() -> kvClear(keys));
    stats.operation(StressOp.KV_CLEAR, nanoClock.nanoTime() - start, 0);
  }

  private Void kvClear(List<String> keys) {
    kv.clear(keys, kvPartition);
    return null;
  }

  /** Reads acknowledged keys one by one; counts those that do not read back as lost. */
  private void recheckKeys(List<String> keys, long first) {
    for (int i = 0; i < keys.size(); i++) {
      String key = keys.get(i);
      String where = kvPartition + " key " + key + " (read alone)";
      boolean found;
      try (Batch read = retrying(() -> kv.batchGet(List.of(key), kvPartition, null))) {
        found = read.rowCount() == 1;
        if (found && plan.verify()) {
          verifyRow(read, 0, plan.valueBytes(), where, id, first + i);
        }
      } catch (TqException e) {
        stats.error(e.code().name(), "client " + id + ": " + where + ": " + e.getMessage());
        found = false;
      }
      if (!found) {
        stats.lost(1, where + ": acknowledged, does not read back");
      }
    }
  }

  private BatchMeta put(String partition, int width, long firstSequence) {
    try (Batch batch = batch(width, firstSequence)) {
      long start = nanoClock.nanoTime();
      BatchMeta written = client.put(batch, partition);
      stats.operation(StressOp.PUT, nanoClock.nanoTime() - start, bytes(batch));
      stats.written(batch.rowCount());
      outages.succeeded(StressOp.PUT, start, written);
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
    outages.succeeded(StressOp.FETCH, start, fetched);
    if (fetched.size() != plan.rows()) {
      // A blocking fetch returns its batch size or fails; rows it did not return stay ready
      // (the own flow and the drain count them as lost if nobody reads them).
      stats.error(
          "FETCH_SIZE_MISMATCH",
          partition + ": a blocking fetch of " + plan.rows() + " returned " + fetched.size());
    }
    return fetched;
  }

  private void clear(BatchMeta samples) {
    long start = nanoClock.nanoTime();
    retrying(
        () -> {
          client.clearSamples(samples);
          return null;
        });
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
      if (!verifyFields(read, p, where, writer, seq)) {
        return false;
      }
      stats.verified(1);
      return true;
    } catch (RuntimeException e) {
      stats.corrupted(where + ": unreadable row: " + e);
      return false;
    }
  }

  /** Checks that the tag and note of row {@code p} name the writer and sequence. */
  private boolean verifyFields(Batch read, int p, String where, long writer, long seq) {
    try {
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
