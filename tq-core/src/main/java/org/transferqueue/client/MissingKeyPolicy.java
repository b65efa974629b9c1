package org.transferqueue.client;

/** What a key-value read does about requested keys that do not exist. */
public enum MissingKeyPolicy {
  /** Fail with {@code UNKNOWN_KEY}, naming the missing keys (the default). */
  FAIL,
  /** Return rows for the keys that exist only, in request order. */
  SKIP
}
