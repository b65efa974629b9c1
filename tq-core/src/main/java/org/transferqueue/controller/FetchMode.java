package org.transferqueue.controller;

/** What a {@link GetMetadataRequest} asks for. */
public enum FetchMode {
  /** Reserve indexes for new samples (a producer's first put); nothing is marked produced. */
  INSERT,
  /** Sample ready, unconsumed samples for a task through the sampler and mark them consumed. */
  FETCH,
  /** Every sample of the partition, produced or not, without sampling or consumption. */
  FORCE_FETCH
}
