/**
 * Immutable metadata values exchanged between controller, storage and clients: {@link
 * org.transferqueue.meta.FieldSchema} (one field's dtype and per-sample shapes), {@link
 * org.transferqueue.meta.BatchMeta} (a columnar descriptor of a batch of samples) and {@link
 * org.transferqueue.meta.KvBatchMeta} (the key-value interface's descriptor).
 *
 * <p>Every value here is immutable and therefore safe to share between threads. User-supplied maps
 * (tags, extra info, backend metadata) are deep-copied into unmodifiable form at construction, so
 * neither the caller nor a reader can change a value after the fact. Such maps hold only
 * JSON-compatible values: {@code null}, {@code String}, {@code Boolean}, numbers, {@code List} and
 * {@code Map} with {@code String} keys. Integral numbers are normalised to {@code Long} and
 * floating-point numbers to {@code Double}, as a round trip through the wire codec would.
 */
package org.transferqueue.meta;
