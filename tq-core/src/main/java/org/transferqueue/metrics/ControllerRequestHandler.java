package org.transferqueue.metrics;

/** Receives every measured controller request, after it finished. Must be thread-safe. */
@FunctionalInterface
public interface ControllerRequestHandler {
  /**
   * Called once per request.
   *
   * @param op the request type
   * @param durationNanos how long the request took
   * @param samples the samples it processed (produced or cleared); 0 when not counted
   * @param failed whether the request threw
   */
  void onRequest(ControllerOp op, long durationNanos, long samples, boolean failed);
}
