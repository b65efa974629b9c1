/**
 * The user-facing API: {@link org.transferqueue.client.TransferQueueSystem} (starts and owns the
 * embedded controller and storage), {@link org.transferqueue.client.MetaClient} (the low-level,
 * metadata-based client), {@link org.transferqueue.client.KvApi} (the Redis-style key-value API)
 * and {@link org.transferqueue.client.StreamingLoader} (per-rank micro-batches of ready samples,
 * prefetched in the background). {@link
 * org.transferqueue.client.TransferQueueSystem#saveCheckpoint} and {@code loadCheckpoint} save and
 * restore the controller and the stored data (format in {@code docs/CHECKPOINT.md}).
 *
 * <p>Every operation has a blocking form and a {@code CompletableFuture} form ({@code ...Async})
 * with identical semantics; both may be mixed freely from any thread.
 */
package org.transferqueue.client;
