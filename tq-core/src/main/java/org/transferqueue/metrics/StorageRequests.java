package org.transferqueue.metrics;

import java.util.Objects;
import java.util.function.Function;
import java.util.function.LongConsumer;
import org.transferqueue.Clock;
import org.transferqueue.ErrorHandler;

/**
 * Measures the requests a storage server (a storage unit or an object-store node) handles: runs a
 * handler, times it and records it in {@link StorageRequestMeters} under the server's {@code
 * storage_unit_id} and the request's {@code op_type}. The handler reports the samples (or keys) it
 * processes through the {@link LongConsumer} it is given; a handler that throws is counted as an
 * error. The handler's result or exception is passed on unchanged; a failure of the meters goes to
 * the {@link ErrorHandler} and never to the caller.
 *
 * <pre>{@code
 * Reply reply = requests.measure(StorageOp.PUT_DATA, samples -> onPut(request, samples));
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class StorageRequests {
  /** Measures nothing: handlers are run directly. */
  public static final StorageRequests NOOP = new StorageRequests();

  private static final LongConsumer IGNORE = n -> {};

  private final StorageRequestMeters meters;
  private final String unitId;
  private final Clock nanoClock;
  private final ErrorHandler errors;

  private StorageRequests() {
    this.meters = null;
    this.unitId = null;
    this.nanoClock = null;
    this.errors = null;
  }

  /**
   * Creates a measuring instance for one server.
   *
   * @param meters the meters; {@code unitId} must be one of its units
   * @param unitId the server's {@code storage_unit_id} label
   * @param nanoClock a monotonic clock in nanoseconds
   * @param errors receives the meters' failures
   */
  public StorageRequests(
      StorageRequestMeters meters, String unitId, Clock nanoClock, ErrorHandler errors) {
    this.meters = Objects.requireNonNull(meters, "meters");
    this.unitId = Objects.requireNonNull(unitId, "unitId");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    this.errors = Objects.requireNonNull(errors, "errors");
  }

  /**
   * Runs and measures one request.
   *
   * @param op the request type
   * @param handler the request; it reports the samples it processes to its argument
   * @param <T> its result type
   * @return the handler's result
   */
  public <T> T measure(StorageOp op, Function<LongConsumer, T> handler) {
    if (meters == null) {
      return handler.apply(IGNORE);
    }
    long start = nanoClock.nanoTime();
    long[] samples = new long[1];
    T result;
    try {
      result = handler.apply(n -> samples[0] += n);
    } catch (RuntimeException | Error e) {
      record(op, start, samples[0], true);
      throw e;
    }
    record(op, start, samples[0], false);
    return result;
  }

  private void record(StorageOp op, long start, long samples, boolean failed) {
    try {
      meters.record(unitId, op, nanoClock.nanoTime() - start, samples, failed);
    } catch (RuntimeException e) {
      errors.onError("storage request " + op, e);
    }
  }
}
