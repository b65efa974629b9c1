package org.transferqueue.client;

/**
 * When a {@link StreamingLoader}'s iteration ends by itself.
 *
 * <p>In every mode a batch index that cannot be served yet is retried once per poll interval, and
 * {@link StreamingLoader#close()} ends the iteration at once.
 */
public enum Termination {
  /** Never ends by itself: keeps polling until the loader is closed (upstream infinite mode). */
  INFINITE,

  /**
   * Ends when a fetch for the loader's next batch index finds nothing although the task had
   * consumed every sample of the partition (pre-allocated indexes count as unconsumed) before that
   * fetch began, and no delivered micro-batch awaits acknowledgement. Because the consumption check
   * precedes the fetch, a replica that lags behind its data-parallel peers still receives every
   * batch its group was assigned (served from the sampler's cache) before it stops. Producers that
   * write a partition in several puts need pre-allocation (see the controller's {@code
   * prealloc_sample_num}) or {@link #UNTIL_PRODUCER_DONE}, or the loader may stop between two puts.
   */
  UNTIL_CONSUMED,

  /**
   * Like {@link #UNTIL_CONSUMED}, and additionally the producer has signalled completion with
   * {@link StreamingLoader#markProducerDone}: some sample of the partition carries the tag {@link
   * StreamingLoader#PRODUCER_DONE_TAG} set to {@code true}. Safe without pre-allocation.
   */
  UNTIL_PRODUCER_DONE
}
