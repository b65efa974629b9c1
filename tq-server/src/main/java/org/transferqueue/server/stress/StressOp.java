package org.transferqueue.server.stress;

import java.util.Locale;

/** The timed operations of a stress client, in the order one iteration runs them. */
public enum StressOp {
  /** {@code MetaClient.put(batch, partition)}: store new samples and notify the controller. */
  PUT,
  /** {@code MetaClient.getMeta(fetch ..)}: the controller's sampler picks ready samples. */
  FETCH,
  /** {@code MetaClient.getData(meta)}: read the fetched samples from storage. */
  GET,
  /** {@code MetaClient.clearSamples(meta)}: remove the samples from storage and controller. */
  CLEAR,
  /** {@code KvApi.batchPut(keys, partition, batch, tags)}: store rows under keys. */
  KV_PUT,
  /** {@code KvApi.batchGet(keys, partition, null)}: read the rows of keys, in key order. */
  KV_GET,
  /** {@code KvApi.clear(keys, partition)}: remove keys and their rows. */
  KV_CLEAR;

  /**
   * The name used in reports.
   *
   * @return the lower-case name, e.g. {@code put} or {@code kv_get}
   */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
