package org.transferqueue.metrics;

import java.util.Objects;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import org.transferqueue.Clock;
import org.transferqueue.ErrorHandler;

/**
 * Measures controller requests: runs a call, times it and hands the outcome to a {@link
 * ControllerRequestHandler}. The call's result or exception is passed on unchanged; a failure of
 * the handler (or of the sample count function) goes to the {@link ErrorHandler} and never to the
 * caller.
 *
 * <pre>{@code
 * BatchMeta meta = requests.measure(ControllerOp.GET_META, () -> controller.getMetadata(request));
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class ControllerRequests {
  /** Measures nothing: calls are run directly. */
  public static final ControllerRequests NOOP = new ControllerRequests();

  private final ControllerRequestHandler handler;
  private final Clock nanoClock;
  private final ErrorHandler errors;

  private ControllerRequests() {
    this.handler = null;
    this.nanoClock = null;
    this.errors = null;
  }

  /**
   * Creates a measuring instance.
   *
   * @param handler receives each request
   * @param nanoClock a monotonic clock in nanoseconds
   * @param errors receives the handler's failures
   */
  public ControllerRequests(
      ControllerRequestHandler handler, Clock nanoClock, ErrorHandler errors) {
    this.handler = Objects.requireNonNull(handler, "handler");
    this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    this.errors = Objects.requireNonNull(errors, "errors");
  }

  /**
   * Runs and measures a request that counts no samples.
   *
   * @param op the request type
   * @param call the request
   * @param <T> its result type
   * @return the call's result
   */
  public <T> T measure(ControllerOp op, Supplier<T> call) {
    return measure(op, call, null);
  }

  /**
   * Runs and measures a request without a result.
   *
   * @param op the request type
   * @param call the request
   */
  public void run(ControllerOp op, Runnable call) {
    measure(
        op,
        () -> {
          call.run();
          return null;
        },
        null);
  }

  /**
   * Runs and measures a request that counts samples.
   *
   * @param op the request type
   * @param call the request
   * @param samples the number of samples a successful result processed; null for none
   * @param <T> its result type
   * @return the call's result
   */
  public <T> T measure(ControllerOp op, Supplier<T> call, ToLongFunction<? super T> samples) {
    if (handler == null) {
      return call.get();
    }
    long start = nanoClock.nanoTime();
    T result;
    try {
      result = call.get();
    } catch (RuntimeException | Error e) {
      report(op, start, null, null, true);
      throw e;
    }
    report(op, start, result, samples, false);
    return result;
  }

  private <T> void report(
      ControllerOp op, long start, T result, ToLongFunction<? super T> samples, boolean failed) {
    try {
      long duration = nanoClock.nanoTime() - start;
      long count = samples == null || failed ? 0 : samples.applyAsLong(result);
      handler.onRequest(op, duration, count, failed);
    } catch (RuntimeException e) {
      errors.onError("request " + op, e);
    }
  }
}
