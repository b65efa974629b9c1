package org.transferqueue.client;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.transferqueue.Closeables;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.Threads;
import org.transferqueue.TqException;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.SamplingConfig;
import org.transferqueue.tensor.Batch;

/**
 * Streams the micro-batches of one data-parallel rank out of a partition as soon as they are ready:
 * fetches global batches through the controller's sampler, reads their data and splits them into
 * micro-batches, prefetching on background virtual threads.
 *
 * <pre>{@code
 * try (StreamingLoader loader = StreamingLoader.builder(tq.client())
 *     .partition("train").task("update_actor").fields("input_ids")
 *     .batchSize(8).microBatchSize(2).dpRank(0)
 *     .termination(Termination.UNTIL_CONSUMED).prefetch(2).build()) {
 *   for (MicroBatch mb : loader) {
 *     Batch rows = mb.batch();          // closed by the loader when the next one is taken
 *     client.put(output, mb.meta());    // write results for exactly these samples
 *   }
 * }
 * }</pre>
 *
 * <h2>Fetching</h2>
 *
 * Global batch {@code k} is requested with {@code sampling_config = {dp_rank, batch_index = k}} in
 * fetch mode, without waiting at the controller; an empty answer is retried after the poll
 * interval. With the {@link org.transferqueue.sampler.RankAwareSampler} (configure it on the
 * system) every loader of one data-parallel rank receives the same samples for the same {@code k},
 * served from the sampler's cache, and loaders of different ranks receive disjoint samples; the
 * {@link org.transferqueue.sampler.SeqlenBalancedSampler} uses the same two values. Metadata
 * requests are issued one at a time in batch-index order, whatever the number of fetch workers, so
 * each batch index is fetched exactly once per pass and no micro-batch is delivered twice; the
 * workers read data in parallel and at most {@code prefetch} batches are fetched ahead of the
 * consumer. Batches are delivered in batch-index order.
 *
 * <h2>Micro-batches</h2>
 *
 * A batch of {@code R} rows yields {@code ceil(R / microBatchSize)} micro-batches of consecutive
 * rows, the last one smaller when {@code R} is not a multiple; each micro-batch's data is read with
 * its own metadata slice, so metadata and rows always agree. See {@link MicroBatch} for ownership.
 *
 * <h2>Hooks</h2>
 *
 * Two optional hooks replace steps of the loader, as upstream {@code StreamingDataset}'s {@code
 * fetch_batch_fn} and {@code process_batch_fn} do:
 *
 * <ul>
 *   <li>{@link Builder#fetchBatch(FetchBatchHandler)} replaces the fetch of one global batch: it
 *       receives the client and the request the loader would send (fetch mode, partition, fields,
 *       task, batch size, and {@code dp_rank} and {@code batch_index} in the sampling
 *       configuration) and returns the samples, with their rows or without (the loader then reads
 *       them), or {@link BatchPart#none()} when nothing is ready yet (asked again after the poll
 *       interval). Termination checks stay the loader's.
 *   <li>{@link Builder#processBatch(ProcessBatchHandler)} replaces the split into micro-batches: it
 *       receives the rows of the whole global batch, its metadata and the micro-batch size, and
 *       returns the micro-batches in delivery order, each the rows with the metadata of exactly
 *       those rows (checked: {@code SHAPE_MISMATCH} otherwise). They may be views of the batch
 *       ({@link Batch#slice}, {@link Batch#selectFields}) or new batches; the loader keeps the
 *       batch open until every micro-batch made from it is closed.
 * </ul>
 *
 * <pre>{@code
 * StreamingLoader loader = StreamingLoader.builder(client)
 *     .partition("train").task("update_actor").fields("input_ids", "mask").batchSize(8)
 *     .fetchBatch((c, request) -> c.tryGetMeta(request.withTokenBudget(4096L))
 *         .map(BatchPart::of).orElse(BatchPart.none()))
 *     .processBatch((rows, meta, micro) -> List.of(new BatchPart(meta, rows.selectFields("input_ids"))))
 *     .build();
 * }</pre>
 *
 * A hook's exception ends the iteration as a failed fetch does (thrown by {@code hasNext()} until
 * {@link #reset()}); a {@link TqException} is passed on as it is, any other exception as {@code
 * INTERNAL} with it as the cause. The one exception is a fetch hook's {@link
 * DeadlineExceededException}, which a hook that calls {@link MetaClient#getMeta} of a blocking-mode
 * controller gets for "not ready": it counts as {@link BatchPart#none()}. A hook that calls {@link
 * MetaClient#tryGetMeta} gets "not ready" as an empty answer instead. With acknowledgements, a
 * redelivered micro-batch's rows are read again through its metadata, without the hooks.
 *
 * <h2>Acknowledgement (optional)</h2>
 *
 * With {@link Builder#ackTimeout(Duration)} set, every delivered micro-batch must be {@link
 * MicroBatch#ack() acknowledged} before the timeout; an unacknowledged one is delivered again (its
 * data read anew, {@link MicroBatch#attempt()} incremented) and the iteration does not end while
 * any is outstanding. Redelivery is local to this loader: the controller's consumption flags are
 * not changed. Without a timeout (the default), delivery is at most once, as upstream.
 *
 * <h2>Reset and steps</h2>
 *
 * {@link #reset()} drops every buffered and undelivered batch (closing its data) and restarts at
 * batch index 0; with a caching sampler the next pass replays the same batches from the sampler's
 * cache, otherwise it continues with unconsumed samples (batches that were fetched but dropped stay
 * consumed at the controller). {@link #step(String)} does the same and switches to another
 * partition, to reuse a loader across training steps.
 *
 * <h2>Design note (concurrency)</h2>
 *
 * All mutable state is guarded by {@link #lock}, including the acknowledgement tracker ({@code
 * Redeliveries}); {@link #changed} is signalled on every state change. The settings ({@link
 * LoaderSettings}) are immutable. Workers never call the client while holding the lock. A batch
 * index that cannot be served yet is an empty answer of {@link MetaClient#tryGetMeta}, not an
 * exception. A {@code generation} counter, incremented by reset, step and close, tells a worker
 * that finishes a request for an older generation to discard (and close) its result. Waits have
 * deadlines from the injected clock and are woken by signals, so close, reset and step take effect
 * at once. Thread-safe; iteration is meant for one consumer thread.
 */
public final class StreamingLoader implements Iterable<MicroBatch>, AutoCloseable {
  /**
   * The tag that {@link #markProducerDone} sets and {@link Termination#UNTIL_PRODUCER_DONE} reads.
   */
  public static final String PRODUCER_DONE_TAG = "tq_producer_done";

  /** The default poll interval after an empty fetch. */
  public static final Duration POLL_INTERVAL_DEFAULT = Duration.ofSeconds(1);

  private static final BatchPart END = BatchPart.of(BatchMeta.empty(Map.of("end", true)));

  private final MetaClient client;
  private final LoaderSettings settings;
  private final ExecutorService workers;
  private final AtomicLong itemIds = new AtomicLong();

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();

  // Guarded by lock.
  private String partitionId;
  private long generation;
  private int nextClaim;
  private boolean claimBusy;
  private int nextDeliver;
  private int endIndex = Integer.MAX_VALUE;
  private final TreeMap<Integer, List<Item>> fetched = new TreeMap<>();
  private final ArrayDeque<Item> queue = new ArrayDeque<>();
  private final Redeliveries redeliveries;
  private TqException failure;
  private MicroBatch current;
  private boolean started;
  private boolean closed;

  private StreamingLoader(MetaClient client, LoaderSettings settings) {
    this.client = client;
    this.settings = settings;
    this.partitionId = settings.partitionId();
    this.redeliveries =
        new Redeliveries(settings.ackTimeout() == null ? 0 : settings.ackTimeout().toNanos());
    this.workers = Executors.newThreadPerTaskExecutor(Threads.virtual("tq-loader"));
  }

  /**
   * Starts building a loader that fetches through {@code client}.
   *
   * @param client the client; not owned (closing the loader does not close it)
   * @return a builder
   */
  public static Builder builder(MetaClient client) {
    return new Builder(client);
  }

  /**
   * Creates a loader from settings built on their own; nothing is fetched before iteration starts.
   *
   * @param client the client; not owned (closing the loader does not close it)
   * @param settings the settings
   * @return a loader the caller owns and must close
   * @throws TqException with {@code INVALID_ARGUMENT} for a null client
   */
  public static StreamingLoader of(MetaClient client, LoaderSettings settings) {
    if (client == null) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "client must not be null");
    }
    return new StreamingLoader(client, Objects.requireNonNull(settings, "settings"));
  }

  /**
   * The settings this loader was built with (its partition is the first one; see {@link
   * #partition()} for the current one).
   *
   * @return the settings
   */
  public LoaderSettings settings() {
    return settings;
  }

  /**
   * Signals that the producer of a partition has written everything, for loaders with {@link
   * Termination#UNTIL_PRODUCER_DONE}: merges the tag {@link #PRODUCER_DONE_TAG}{@code = true} into
   * the tags of the given samples (typically those of the producer's last put).
   *
   * @param client the client
   * @param written samples of the partition, at least one
   * @throws TqException with {@code INVALID_ARGUMENT} for empty metadata
   */
  public static void markProducerDone(MetaClient client, BatchMeta written) {
    Objects.requireNonNull(client, "client");
    if (written == null || written.isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "markProducerDone needs at least one written sample");
    }
    List<Map<String, Object>> tags = new ArrayList<>(written.size());
    for (int i = 0; i < written.size(); i++) {
      tags.add(Map.of(PRODUCER_DONE_TAG, true));
    }
    client.setTags(written.withTagsMerged(tags));
  }

  /**
   * Iterates over the remaining micro-batches; the first call starts the fetch workers. All
   * iterators share one stream: a micro-batch is delivered to one of them. {@code hasNext()} blocks
   * until a micro-batch is ready or the stream ended; it throws the {@link TqException} of a failed
   * fetch or read (until {@link #reset()}).
   *
   * @return an iterator
   */
  @Override
  public Iterator<MicroBatch> iterator() {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return awaitNext();
      }

      @Override
      public MicroBatch next() {
        if (!awaitNext()) {
          throw new NoSuchElementException("the stream of partition " + partition() + " ended");
        }
        return takeNext();
      }
    };
  }

  /**
   * The partition this loader reads now.
   *
   * @return the partition id
   */
  public String partition() {
    lock.lock();
    try {
      return partitionId;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Drops every fetched but undelivered batch and the current micro-batch (closing their data),
   * forgets unacknowledged deliveries and failures, and restarts at batch index 0.
   */
  public void reset() {
    restart(null);
  }

  /**
   * Resets and switches to another partition (the next training step).
   *
   * @param nextPartitionId the partition to read from now on
   * @throws TqException with {@code INVALID_ARGUMENT} for a null or empty id
   */
  public void step(String nextPartitionId) {
    if (nextPartitionId == null || nextPartitionId.isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "partition_id must be non-empty: " + nextPartitionId);
    }
    restart(nextPartitionId);
  }

  private void restart(String nextPartitionId) {
    List<AutoCloseable> dropped = new ArrayList<>();
    lock.lock();
    try {
      ensureOpen();
      dropAllLocked(dropped);
      if (nextPartitionId != null) {
        partitionId = nextPartitionId;
      }
      nextClaim = 0;
      nextDeliver = 0;
      endIndex = Integer.MAX_VALUE;
      failure = null;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    Closeables.closeAll(dropped);
  }

  private void dropAllLocked(List<AutoCloseable> dropped) {
    generation++;
    fetched.values().forEach(items -> items.forEach(item -> dropped.add(item.closer())));
    fetched.clear();
    queue.forEach(item -> dropped.add(item.closer()));
    queue.clear();
    redeliveries.clear();
    if (current != null) {
      dropped.add(current);
      current = null;
    }
  }

  /**
   * Stops prefetching at once, ends every iteration, closes all buffered data and waits for the
   * fetch workers to finish their current request. Idempotent.
   */
  @Override
  public void close() {
    List<AutoCloseable> dropped = new ArrayList<>();
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      dropAllLocked(dropped);
      changed.signalAll();
    } finally {
      lock.unlock();
    }
    Closeables.closeAll(dropped);
    workers.close();
  }

  // ---- consumer side ---------------------------------------------------------------------------

  private boolean awaitNext() {
    lock.lock();
    try {
      if (!started && !closed) {
        started = true;
        for (int i = 0; i < settings.fetchWorkers(); i++) {
          workers.execute(this::runWorker);
        }
      }
      while (true) {
        if (closed) {
          return false;
        }
        if (failure != null) {
          throw failure;
        }
        long now = settings.clock().nanoTime();
        long nextExpiry = redeliveries.requeueExpired(now, queue);
        if (!queue.isEmpty()) {
          return true;
        }
        List<Item> batch = fetched.remove(nextDeliver);
        if (batch != null) {
          queue.addAll(batch);
          nextDeliver++;
          changed.signalAll();
          continue;
        }
        if (nextDeliver >= endIndex && redeliveries.isEmpty()) {
          return false;
        }
        if (nextExpiry == Long.MAX_VALUE) {
          changed.await();
        } else {
          changed.awaitNanos(nextExpiry - now);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TqException(ErrorCode.ILLEGAL_STATE, "interrupted while waiting for data", e);
    } finally {
      lock.unlock();
    }
  }

  private MicroBatch takeNext() {
    Item item;
    MicroBatch previous;
    long taken;
    lock.lock();
    try {
      item = queue.poll();
      previous = current;
      current = null;
      taken = generation;
      if (item != null) {
        redeliveries.delivered(item, settings.clock().nanoTime());
      }
    } finally {
      lock.unlock();
    }
    if (previous != null) {
      previous.close();
    }
    if (item == null) {
      throw new NoSuchElementException("another consumer took the micro-batch");
    }
    Batch data = item.data() != null ? item.data() : client.getData(item.meta());
    MicroBatch microBatch =
        new MicroBatch(
            item.meta(),
            data,
            item.batchIndex(),
            item.microIndex(),
            item.attempt(),
            item.id(),
            this::acknowledge,
            item.lease());
    lock.lock();
    try {
      if (closed || taken != generation) {
        microBatch.close();
      } else {
        current = microBatch;
      }
    } finally {
      lock.unlock();
    }
    return microBatch;
  }

  private void acknowledge(long itemId) {
    if (!redeliveries.enabled()) {
      return;
    }
    lock.lock();
    try {
      redeliveries.acknowledge(itemId, queue);
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  // ---- fetch workers ---------------------------------------------------------------------------

  /** Claims batch indexes in order, fetches their metadata, then reads their data. */
  private void runWorker() {
    while (true) {
      Claim claim;
      lock.lock();
      try {
        while (!closed
            && (claimBusy
                || failure != null
                || nextClaim >= endIndex
                || nextClaim >= nextDeliver + settings.prefetch())) {
          changed.await();
        }
        if (closed) {
          return;
        }
        claimBusy = true;
        claim = new Claim(generation, nextClaim, partitionId);
      } catch (InterruptedException e) {
        return;
      } finally {
        lock.unlock();
      }
      BatchPart meta = null;
      TqException error = null;
      try {
        meta = fetchMeta(claim);
      } catch (RuntimeException e) {
        error = asTqException(e, claim);
      }
      boolean read;
      lock.lock();
      try {
        claimBusy = false;
        boolean currentGeneration = claim.generation() == generation && !closed;
        read = false;
        if (currentGeneration) {
          if (error != null) {
            failure = error;
          } else if (meta == END) {
            endIndex = claim.index();
          } else if (meta != null) {
            nextClaim = claim.index() + 1;
            read = true;
          }
        }
        changed.signalAll();
      } finally {
        lock.unlock();
      }
      if (read) {
        readAndPublish(claim, meta);
      } else if (meta != null && meta != END) {
        Closeables.closeAll(Arrays.asList(meta.data()));
      }
    }
  }

  /**
   * Fetches the metadata of one batch index, retrying once per poll interval.
   *
   * @return the batch, {@link #END} when the stream is exhausted at this index, or null when the
   *     claim was abandoned (closed, reset or stepped)
   */
  private BatchPart fetchMeta(Claim claim) {
    while (true) {
      boolean exhaustedBefore = settings.termination() != Termination.INFINITE && exhausted(claim);
      BatchPart part = fetchOnce(claim);
      if (!part.meta().isEmpty()) {
        return part;
      }
      Closeables.closeAll(Arrays.asList(part.data()));
      if (exhaustedBefore) {
        return END;
      }
      lock.lock();
      try {
        long deadline = settings.clock().nanoTime() + settings.pollInterval().toNanos();
        while (!closed && generation == claim.generation()) {
          long remaining = deadline - settings.clock().nanoTime();
          if (remaining <= 0) {
            break;
          }
          changed.awaitNanos(remaining);
        }
        if (closed || generation != claim.generation()) {
          return null;
        }
      } catch (InterruptedException e) {
        return null;
      } finally {
        lock.unlock();
      }
    }
  }

  private BatchPart fetchOnce(Claim claim) {
    GetMetadataRequest request =
        new GetMetadataRequest(
            FetchMode.FETCH,
            claim.partitionId(),
            settings.fields(),
            settings.taskName(),
            settings.batchSize(),
            new SamplingConfig(settings.dpRank(), claim.index(), settings.samplingOptions()),
            Duration.ZERO);
    if (settings.fetchHandler() == null) {
      return client.tryGetMeta(request).map(BatchPart::of).orElse(BatchPart.none());
    }
    BatchPart part;
    try {
      part = settings.fetchHandler().onFetchBatch(client, request);
    } catch (DeadlineExceededException e) {
      // A hook that asks with getMeta of a blocking-mode controller learns "not ready" this way.
      return BatchPart.none();
    }
    if (part == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "the fetch hook returned null for batch_index="
              + claim.index()
              + " (BatchPart.none() means nothing is ready yet)");
    }
    return part;
  }

  private boolean exhausted(Claim claim) {
    if (!client.checkConsumptionStatus(claim.partitionId(), settings.taskName())) {
      return false;
    }
    if (settings.termination() != Termination.UNTIL_PRODUCER_DONE) {
      return true;
    }
    // No such partition (yet): no producer marked it done.
    BatchMeta all =
        client
            .tryGetMeta(GetMetadataRequest.forceFetch(claim.partitionId(), List.of()))
            .orElseGet(BatchMeta::empty);
    for (Map<String, Object> tags : all.tags()) {
      if (tags != null && Boolean.TRUE.equals(tags.get(PRODUCER_DONE_TAG))) {
        return true;
      }
    }
    return false;
  }

  private void readAndPublish(Claim claim, BatchPart part) {
    List<Item> items = new ArrayList<>();
    TqException error = null;
    try {
      if (part.data() == null && settings.processHandler() == null) {
        readSlices(claim, part.meta(), items);
      } else {
        split(claim, part, items);
      }
    } catch (RuntimeException e) {
      error = asTqException(e, claim);
    }
    boolean published = false;
    lock.lock();
    try {
      if (claim.generation() == generation && !closed) {
        if (error != null) {
          failure = error;
        } else {
          fetched.put(claim.index(), items);
          published = true;
        }
        changed.signalAll();
      }
    } finally {
      lock.unlock();
    }
    if (!published) {
      Closeables.closeAll(items.stream().map(Item::closer).toList());
    }
  }

  /** Reads each micro-batch with its own metadata slice (no hook). */
  private void readSlices(Claim claim, BatchMeta meta, List<Item> items) {
    int micro = 0;
    try {
      for (int[] range : MicroBatch.ranges(meta.size(), settings.microBatchSize())) {
        BatchMeta slice = meta.slice(range[0], range[1], 1);
        Batch data = client.getData(slice);
        items.add(
            new Item(itemIds.getAndIncrement(), claim.index(), micro++, slice, data, 1, null));
      }
    } catch (RuntimeException e) {
      Closeables.closeAll(items.stream().map(Item::closer).toList());
      items.clear();
      throw e;
    }
  }

  /**
   * Splits the rows of a whole batch (the fetch hook's, or read here) into micro-batches, by the
   * process hook or by consecutive rows; the batch stays open until every micro-batch is closed.
   */
  private void split(Claim claim, BatchPart part, List<Item> items) {
    BatchMeta meta = part.meta();
    Batch rows = part.data() != null ? part.data() : client.getData(meta);
    BatchLease lease = new BatchLease(rows);
    try {
      checkAligned(rows, meta, "the fetched batch");
      List<BatchPart> pieces;
      if (settings.processHandler() == null) {
        pieces = new ArrayList<>();
        for (int[] range : MicroBatch.ranges(meta.size(), settings.microBatchSize())) {
          pieces.add(
              new BatchPart(meta.slice(range[0], range[1], 1), rows.slice(range[0], range[1])));
        }
      } else {
        pieces = settings.processHandler().onProcessBatch(rows, meta, settings.microBatchSize());
        if (pieces == null) {
          throw new TqException(ErrorCode.INVALID_ARGUMENT, "the process hook returned null");
        }
      }
      int micro = 0;
      for (BatchPart piece : pieces) {
        if (piece == null || piece.data() == null) {
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "the process hook returned micro-batch " + micro + " without rows");
        }
        checkAligned(piece.data(), piece.meta(), "micro-batch " + micro);
        // The batch itself is handed out as a view, so that only the lease closes it.
        Batch data = piece.data() == rows ? rows.slice(0, rows.rowCount()) : piece.data();
        items.add(
            new Item(
                itemIds.getAndIncrement(), claim.index(), micro++, piece.meta(), data, 1, lease));
        lease.retain();
      }
    } catch (RuntimeException e) {
      Closeables.closeAll(items.stream().map(Item::closer).toList());
      items.clear();
      throw e;
    } finally {
      lease.close(); // this method's own hold
    }
  }

  private static void checkAligned(Batch rows, BatchMeta meta, String what) {
    if (rows.rowCount() != meta.size()) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          what + " has " + rows.rowCount() + " rows but its metadata " + meta.size() + " samples");
    }
  }

  private TqException asTqException(RuntimeException e, Claim claim) {
    if (e instanceof TqException tq) {
      return tq;
    }
    return new TqException(
        ErrorCode.INTERNAL,
        "streaming loader failed on partition="
            + claim.partitionId()
            + " batch_index="
            + claim.index()
            + ": "
            + e,
        e);
  }

  private void ensureOpen() {
    if (closed) {
      throw new TqException(ErrorCode.CLOSED, "the streaming loader is closed");
    }
  }

  @Override
  public String toString() {
    return "StreamingLoader[partition="
        + partition()
        + " task="
        + settings.taskName()
        + " dp_rank="
        + settings.dpRank()
        + " batch="
        + settings.batchSize()
        + " micro="
        + settings.microBatchSize()
        + "]";
  }

  /** A batch index being fetched by one worker for one generation. */
  private record Claim(long generation, int index, String partitionId) {}

  /**
   * A micro-batch waiting for delivery; {@code data} is null for a redelivery (read again); {@code
   * lease} holds the batch whose views {@code data} are, or is null.
   */
  record Item(
      long id,
      int batchIndex,
      int microIndex,
      BatchMeta meta,
      Batch data,
      int attempt,
      BatchLease lease) {
    Item redelivery() {
      return new Item(id, batchIndex, microIndex, meta, null, attempt + 1, null);
    }

    /** Closes the data and releases the lease of an item that will not be delivered. */
    AutoCloseable closer() {
      return () -> Closeables.closeAll(Arrays.asList(data, lease));
    }
  }

  /**
   * Keeps a batch open while micro-batches made from it are: starts with one hold (the splitter's),
   * closes the batch when the last hold is released. Each hold is released once ({@link
   * MicroBatch#close()} and {@link Item#closer()} run once per item).
   */
  private static final class BatchLease implements AutoCloseable {
    private final Batch batch;
    private final AtomicInteger holds = new AtomicInteger(1);

    BatchLease(Batch batch) {
      this.batch = batch;
    }

    void retain() {
      holds.incrementAndGet();
    }

    @Override
    public void close() {
      if (holds.decrementAndGet() == 0) {
        batch.close();
      }
    }
  }

  /**
   * Replaces the loader's fetch of one global batch, upstream's {@code fetch_batch_fn}.
   *
   * <pre>{@code
   * // fill each batch up to 4096 tokens instead of batchSize samples
   * .fetchBatch((client, request) ->
   *     BatchPart.of(client.getMeta(request.withTokenBudget(4096L).withBatchSize(null))))
   * }</pre>
   */
  @FunctionalInterface
  public interface FetchBatchHandler {
    /**
     * Fetches the samples of one global batch. Called on a fetch worker, one batch index at a time,
     * in order.
     *
     * @param client the loader's client
     * @param request the request the loader would send: fetch mode, partition, fields, task, batch
     *     size, and the rank and batch index in its sampling configuration (polling: no wait)
     * @return the samples, with their rows (the loader takes ownership) or without (the loader
     *     reads them); {@link BatchPart#none()} when nothing is ready yet
     */
    BatchPart onFetchBatch(MetaClient client, GetMetadataRequest request);
  }

  /**
   * Replaces the split of a global batch into micro-batches, upstream's {@code process_batch_fn}.
   *
   * <pre>{@code
   * // one micro-batch per prompt group of 4 rows, whatever microBatchSize says
   * .processBatch((rows, meta, micro) -> {
   *   List<BatchPart> parts = new ArrayList<>();
   *   for (int from = 0; from < rows.rowCount(); from += 4) {
   *     int to = Math.min(rows.rowCount(), from + 4);
   *     parts.add(new BatchPart(meta.selectSamples(IntStream.range(from, to).toArray()),
   *         rows.slice(from, to)));
   *   }
   *   return parts;
   * })
   * }</pre>
   */
  @FunctionalInterface
  public interface ProcessBatchHandler {
    /**
     * Splits (or transforms) the rows of one global batch into micro-batches.
     *
     * @param rows the rows of the whole batch; owned by the loader, valid until every returned
     *     micro-batch is closed; returned views of it need no copy
     * @param meta the metadata of {@code rows}
     * @param microBatchSize the loader's micro-batch size
     * @return the micro-batches in delivery order, each with the metadata of exactly its rows; new
     *     batches among them pass to the loader, which closes them; an empty list delivers nothing
     */
    List<BatchPart> onProcessBatch(Batch rows, BatchMeta meta, int microBatchSize);
  }

  /**
   * Builds a {@link StreamingLoader}: the settings' setters of {@link
   * LoaderSettings.AbstractBuilder}, and {@link #build()}, which validates them all and creates the
   * loader.
   */
  public static final class Builder extends LoaderSettings.AbstractBuilder<Builder> {
    private final MetaClient client;

    private Builder(MetaClient client) {
      this.client = client;
    }

    @Override
    Builder self() {
      return this;
    }

    /**
     * Validates the settings and creates the loader; nothing is fetched before iteration starts.
     *
     * @return a loader the caller owns and must close
     * @throws TqException with {@code INVALID_ARGUMENT} naming the first invalid setting
     */
    public StreamingLoader build() {
      if (client == null) {
        throw new TqException(ErrorCode.INVALID_ARGUMENT, "client must not be null");
      }
      return new StreamingLoader(client, settings());
    }
  }
}
