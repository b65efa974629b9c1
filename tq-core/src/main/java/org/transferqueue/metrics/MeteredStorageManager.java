package org.transferqueue.metrics;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import org.transferqueue.Clock;
import org.transferqueue.ErrorHandler;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.simple.UnitRouter;
import org.transferqueue.tensor.Batch;

/**
 * A {@link StorageManager} that measures the puts, gets and clears of another one as requests of
 * its storage units ({@code PUT_DATA}, {@code GET_DATA}, {@code CLEAR_DATA}).
 *
 * <p>Sample {@code gi} is attributed to unit {@code unitIds.get(gi mod N)}, the routing of
 * SimpleStorage ({@link UnitRouter}); a backend without units is measured as one unit. Each unit a
 * request touches records one request with the samples routed to it and the duration of the whole
 * request (the parts of a request run on the units in parallel, so the request takes as long as its
 * slowest part). A request that throws counts as an error of every unit it touched; a clear counts
 * as an error of the units its result names as failed. Checkpoints are passed through unmeasured.
 *
 * <p>Thread-safe when the wrapped manager is. Measuring never changes a result: failures of the
 * meters go to the {@link ErrorHandler}.
 */
public final class MeteredStorageManager implements StorageManager {
  private static final Function<Object, Set<String>> NONE_FAILED = result -> Set.of();

  private final StorageManager delegate;
  private final StorageRequestMeters meters;
  private final List<String> unitIds;
  private final Clock nanoClock;
  private final ErrorHandler errors;

  /**
   * Wraps a manager.
   *
   * @param delegate the manager measured; closing this closes it
   * @param meters the meters; their units, in routing order, are the units requests go to
   * @param nanoClock a monotonic clock in nanoseconds
   * @param errors receives failures of the meters
   */
  public MeteredStorageManager(
      StorageManager delegate, StorageRequestMeters meters, Clock nanoClock, ErrorHandler errors) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
    this.meters = Objects.requireNonNull(meters, "meters");
    this.unitIds = meters.unitIds();
    if (unitIds.isEmpty()) {
      throw new IllegalArgumentException("meters without units for " + delegate.backendName());
    }
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    this.errors = Objects.requireNonNull(errors, "errors");
  }

  @Override
  public String backendName() {
    return delegate.backendName();
  }

  @Override
  public boolean clearsByField() {
    return delegate.clearsByField();
  }

  @Override
  public Optional<Duration> requestTimeout() {
    return delegate.requestTimeout();
  }

  @Override
  public PutResult put(Batch batch, BatchMeta meta) {
    return timed(StorageOp.PUT_DATA, meta, () -> delegate.put(batch, meta), NONE_FAILED);
  }

  @Override
  public PutResult put(Batch batch, BatchMeta meta, DataParserReference parser) {
    return timed(StorageOp.PUT_DATA, meta, () -> delegate.put(batch, meta, parser), NONE_FAILED);
  }

  @Override
  public Batch get(BatchMeta meta, BufferAllocator allocator) {
    return timed(StorageOp.GET_DATA, meta, () -> delegate.get(meta, allocator), NONE_FAILED);
  }

  @Override
  public ClearResult clear(BatchMeta meta) {
    return timed(
        StorageOp.CLEAR_DATA,
        meta,
        () -> delegate.clear(meta),
        result -> {
          Set<String> failed = new HashSet<>();
          result.failures().forEach(f -> failed.add(f.target()));
          return failed;
        });
  }

  @Override
  public void saveCheckpoint(Path directory, CheckpointDigests digests) {
    delegate.saveCheckpoint(directory, digests);
  }

  @Override
  public PreparedLoad prepareLoadCheckpoint(Path directory, CheckpointDigests digests) {
    return delegate.prepareLoadCheckpoint(directory, digests);
  }

  @Override
  public void loadCheckpoint(Path directory) {
    delegate.loadCheckpoint(directory);
  }

  /** Closes the wrapped manager. */
  @Override
  public void close() {
    delegate.close();
  }

  /**
   * Runs one request of the wrapped manager and records it: as failed by every unit it touched when
   * it throws (the exception is passed on unchanged), else as failed by the units {@code
   * failedUnits} names in its result.
   */
  private <T> T timed(
      StorageOp op,
      BatchMeta meta,
      Supplier<T> call,
      Function<? super T, Set<String>> failedUnits) {
    long start = nanoClock.nanoTime();
    T result;
    try {
      result = call.get();
    } catch (RuntimeException | Error e) {
      record(op, meta, start, Set.of(), true);
      throw e;
    }
    record(op, meta, start, failedUnits.apply(result), false);
    return result;
  }

  private void record(
      StorageOp op, BatchMeta meta, long start, Set<String> failedUnits, boolean failed) {
    try {
      long duration = nanoClock.nanoTime() - start;
      if (meta == null || meta.isEmpty()) {
        return;
      }
      long[] perUnit = new long[unitIds.size()];
      for (long gi : meta.globalIndexArray()) {
        perUnit[UnitRouter.unitOf(gi, perUnit.length)]++;
      }
      for (int u = 0; u < perUnit.length; u++) {
        if (perUnit[u] > 0) {
          String unit = unitIds.get(u);
          meters.record(unit, op, duration, perUnit[u], failed || failedUnits.contains(unit));
        }
      }
    } catch (RuntimeException e) {
      errors.onError("storage request " + op, e);
    }
  }
}
