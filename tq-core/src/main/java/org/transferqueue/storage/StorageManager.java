package org.transferqueue.storage;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.tensor.Batch;

/**
 * Stores, reads and removes the cells of batches in one storage backend, and tells the controller
 * what was produced.
 *
 * <p>Row {@code i} of a batch belongs to sample {@code meta.globalIndex(i)}. A put is atomic from a
 * caller's point of view: when it throws, no cell of the request is left written (a backend that
 * cannot guarantee this says so in its documentation), with one exception: in a batch spanning
 * partitions, the partitions whose notification the controller accepted before another one was
 * rejected stay written, and the {@code NOTIFICATION_FAILED} error names them. A put returns only
 * after every partition's {@link ProductionNotifier#notifyProduced notification} was accepted.
 *
 * <pre>{@code
 * PutResult stored = manager.put(batch, meta);
 * BatchMeta produced = stored.applyTo(meta);
 * try (Batch read = manager.get(produced, allocator)) {
 *   ...
 * }
 * ClearResult cleared = manager.clear(produced);
 * }</pre>
 *
 * <p>Implementations are thread-safe: any number of puts, gets and clears may run at once. Errors
 * are {@link org.transferqueue.TqException}s: bad input ({@code SHAPE_MISMATCH}, {@code
 * INVALID_ARGUMENT}, {@code SCHEMA_CONFLICT}, {@code DUPLICATE_KEY}) is rejected before anything is
 * written; {@code CAPACITY_EXCEEDED}, {@code UNKNOWN_FIELD}, {@code NOT_FOUND}, {@code
 * STORAGE_ERROR}, {@code NOTIFICATION_FAILED} come from the backend.
 */
public interface StorageManager extends AutoCloseable {

  /**
   * The backend's name as configured ({@code backend.storage_backend}), such as {@code
   * SimpleStorage}.
   *
   * @return the name
   */
  String backendName();

  /**
   * Stores every cell of {@code batch} for the samples of {@code meta}, then notifies the
   * controller, one update per partition. An empty {@code meta} stores and notifies nothing.
   *
   * @param batch the data; its row count must equal {@code meta.size()}; not closed, not retained
   * @param meta the samples the rows belong to
   * @return the stored schema and backend metadata
   * @throws org.transferqueue.TqException as described in the class comment; {@code
   *     NOTIFICATION_FAILED} if the controller rejected an update (the cause says why)
   */
  PutResult put(Batch batch, BatchMeta meta);

  /**
   * Like {@link #put(Batch, BatchMeta)}, with a data parser run by the backend on the rows before
   * they are stored. Only SimpleStorage supports parsers.
   *
   * @param batch the data
   * @param meta the samples the rows belong to
   * @param parser the registered parser and its arguments
   * @return the stored schema and backend metadata
   * @throws StorageException with {@code UNSUPPORTED_OPERATION} (before touching storage) if the
   *     backend has no parsers, {@code DATA_PARSER_FAILED} for an unknown or failing parser
   */
  default PutResult put(Batch batch, BatchMeta meta, DataParserReference parser) {
    throw new StorageException(
        ErrorCode.UNSUPPORTED_OPERATION,
        "data_parser is not supported for " + backendName() + " (parser '" + parser.name() + "')");
  }

  /**
   * Reads the cells of {@code meta.fieldNames()} for the samples of {@code meta}.
   *
   * <p>The result has one column per field, in field-name order, and one row per sample, in {@code
   * meta}'s order. Column kinds are those the data was put with: dense in, dense out (jagged when
   * the rows' shapes now differ), jagged in, jagged out, object in, object out. The result is an
   * independent copy: changing it never changes stored data.
   *
   * @param meta the samples and fields to read
   * @param allocator where the result's memory comes from
   * @return a batch the caller owns and must close; empty (0 rows) for an empty {@code meta}
   * @throws org.transferqueue.TqException with {@code UNKNOWN_FIELD} or {@code NOT_FOUND} for cells
   *     the backend does not hold
   */
  Batch get(BatchMeta meta, BufferAllocator allocator);

  /**
   * The deadline of one request of this manager to a storage server: a put that waits for a storage
   * server ends within it, and a client waits for the cleanup after a failed put only for what is
   * left of it (the rest goes on in the background), so that one call keeps one deadline.
   *
   * @return the deadline; empty (the default) when every call of this manager is served in this
   *     process and the cleanup of a failed put runs before the put returns
   */
  default Optional<Duration> requestTimeout() {
    return Optional.empty();
  }

  /**
   * Whether {@link #clear} removes only the cells of the fields {@code meta} names (key-value
   * backends remove exact keys), so that a caller clearing whole samples must list every field
   * stored in their partitions. When false, {@link #clear} removes every cell of a sample whatever
   * fields {@code meta} names, and callers need not look the stored fields up.
   *
   * @return true for backends that remove cells by field; false by default
   */
  default boolean clearsByField() {
    return false;
  }

  /**
   * Removes every stored cell of the samples of {@code meta}. Does not talk to the controller.
   *
   * @param meta the samples to remove
   * @return which parts failed, if any; the caller keeps the metadata of those samples
   */
  ClearResult clear(BatchMeta meta);

  /**
   * Saves all stored data under {@code directory}: {@link #saveCheckpoint(Path, CheckpointDigests)}
   * without collecting digests.
   *
   * @param directory a directory reachable by every storage process
   * @throws StorageException with {@code UNSUPPORTED_OPERATION} if the backend has no checkpoints,
   *     {@code STORAGE_ERROR} if saving failed
   */
  default void saveCheckpoint(Path directory) {
    saveCheckpoint(directory, CheckpointDigests.recording(directory));
  }

  /**
   * Saves all stored data under {@code directory} and records the size and CRC32C of every file it
   * writes in {@code digests} (computed while writing; a file not recorded is checksummed by the
   * caller).
   *
   * @param directory a directory reachable by every storage process
   * @param digests receives the digests of the written files
   * @throws StorageException with {@code UNSUPPORTED_OPERATION} if the backend has no checkpoints,
   *     {@code STORAGE_ERROR} if saving failed
   */
  default void saveCheckpoint(Path directory, CheckpointDigests digests) {
    throw new StorageException(
        ErrorCode.UNSUPPORTED_OPERATION, backendName() + " does not support checkpoint");
  }

  /**
   * Replaces all stored data by a checkpoint saved with {@link #saveCheckpoint}: {@link
   * #prepareLoadCheckpoint} followed by {@link PreparedLoad#commit()}.
   *
   * @param directory the directory given to {@link #saveCheckpoint}
   * @throws StorageException with {@code UNSUPPORTED_OPERATION} if the backend has no checkpoints,
   *     {@code NOT_FOUND} or {@code CORRUPT_DATA} for a missing or unreadable checkpoint
   */
  default void loadCheckpoint(Path directory) {
    try (PreparedLoad load = prepareLoadCheckpoint(directory)) {
      load.commit();
    }
  }

  /**
   * Reads and validates a checkpoint and stages its data without changing what is stored, so that a
   * caller can validate other parts of a checkpoint before anything changes.
   *
   * @param directory the directory given to {@link #saveCheckpoint}
   * @return the staged data; {@link PreparedLoad#commit() commit} it or close it to discard
   * @throws StorageException with {@code UNSUPPORTED_OPERATION} if the backend has no checkpoints,
   *     {@code NOT_FOUND}, {@code CORRUPT_DATA} or {@code INVALID_ARGUMENT} for a missing,
   *     unreadable or foreign checkpoint; stored data is unchanged then
   */
  default PreparedLoad prepareLoadCheckpoint(Path directory) {
    return prepareLoadCheckpoint(directory, CheckpointDigests.none());
  }

  /**
   * Like {@link #prepareLoadCheckpoint(Path)}, and verifies each file the backend reads against the
   * manifest's size and CRC32C in {@code digests} in the same pass that reads its data, marking it
   * {@link CheckpointDigests#verified verified}. In a backend of several processes, every process
   * validates and stages its own files; nothing is applied before {@link PreparedLoad#commit()},
   * and {@link PreparedLoad#close()} before a commit discards every staged part.
   *
   * @param directory the directory given to {@link #saveCheckpoint}
   * @param digests the manifest's digests ({@link CheckpointDigests#none()} to check structure
   *     only)
   * @return the staged data; {@link PreparedLoad#commit() commit} it or close it to discard
   * @throws StorageException as {@link #prepareLoadCheckpoint(Path)}; {@code CORRUPT_DATA} also for
   *     a file whose size or checksum differs from the manifest; stored data is unchanged then
   */
  default PreparedLoad prepareLoadCheckpoint(Path directory, CheckpointDigests digests) {
    throw new StorageException(
        ErrorCode.UNSUPPORTED_OPERATION, backendName() + " does not support checkpoint");
  }

  /** A checkpoint read and staged by {@link #prepareLoadCheckpoint}, not yet applied. */
  interface PreparedLoad extends AutoCloseable {
    /**
     * Replaces all stored data by the staged data. Does not fail; at most once.
     *
     * @throws StorageException with {@code ILLEGAL_STATE} if already committed or closed
     */
    void commit();

    /** Discards staged data that was not committed. Idempotent. */
    @Override
    void close();
  }

  /**
   * Stops the manager's threads and frees all stored data and backend resources. Idempotent.
   * Requests must have finished; later requests fail with {@code CLOSED}.
   */
  @Override
  void close();
}
