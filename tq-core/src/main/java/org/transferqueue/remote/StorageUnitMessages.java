package org.transferqueue.remote;

import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;

/**
 * Message types and limits of the storage-unit service (types 200-299).
 *
 * <pre>
 *  type  request metadata                              request bodies     reply metadata
 *  200   PUT   [token, gis[], fields[]]                 tensor rows, aux   [held]
 *        field = [name, kind, dtype, shapes[][]]        (tensor kinds: one body per row)
 *              | [name, OBJECT, mainBytes, auxCount]     (objects: main frame, aux tensors)
 *  201   GET   [gis[], fieldNames[]]                    -                  [fields[]]
 *        field = [false, rows[[kind, dtype, shape[]]]]  reply: one body per tensor row
 *              | [true, mainBytes, auxCount]            reply: main frame, aux tensors
 *  202   CLEAR [gis[]]                                  -                  [removed]
 *  203   STATS []                                       -                  [id, samples, cells,
 *                                                                           fields, allocated,
 *                                                                           peak, capacity|-1]
 *  204   FINISH [rollback, tokens[]]                    -                  [decided]
 *  205   SAVE_CHECKPOINT [path]                         -                  [size, crc32c]
 *  206   PREPARE_LOAD [token, path, size|-1, crc32c]    -                  []
 *  207   COMMIT_LOAD [token]                            -                  []
 *  208   ABORT_LOAD [token]                             -                  []
 * </pre>
 *
 * Kinds are {@link org.transferqueue.tensor.ColumnKind} ordinals, dtypes their PyTorch names, all
 * msgpack. A put with a token other than 0 is held: it stays revocable until a FINISH names the
 * token, which the client chooses (so that it can decide a put whose reply it never received).
 * Checkpoint loads run in two phases across all units ({@link StagedCheckpointLoads}).
 */
final class StorageUnitMessages {
  static final int PUT = 200;
  static final int GET = 201;
  static final int CLEAR = 202;
  static final int STATS = 203;
  static final int FINISH = 204;
  static final int SAVE_CHECKPOINT = 205;
  static final int PREPARE_LOAD = 206;
  static final int COMMIT_LOAD = 207;
  static final int ABORT_LOAD = 208;

  /** The most rows (global indexes) one request may name. */
  static final int MAX_ROWS = 1 << 24;

  /** The most fields one request may name. */
  static final int MAX_FIELDS = 1 << 16;

  /** The highest tensor rank accepted. */
  static final int MAX_RANK = 64;

  private StorageUnitMessages() {}

  /** The error a get gives when a field mixes tensor and object cells, as the embedded units do. */
  static StorageException conflict(String field, String what) {
    return new StorageException(
        ErrorCode.SCHEMA_CONFLICT,
        "field '" + field + "' holds " + what + " among the requested samples");
  }
}
