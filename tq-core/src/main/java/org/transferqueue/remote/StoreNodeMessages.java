package org.transferqueue.remote;

/**
 * Message types of the object-store node service (types 300-399). Results are the engine's numeric
 * Mooncake codes, per key.
 *
 * <pre>
 *  type  request metadata                                bodies            reply metadata / bodies
 *  300   WRITE  [upsert, replicaNum, hardPin, softPin,    one per key       [codes[]]
 *                keys[]]
 *  301   READ   [keys[], capacities[]] (-1 = any size)    -                 [results[]] / one body
 *                                                                            per key (empty when
 *                                                                            the result is an error)
 *  302   EXIST  [keys[]]                                  -                 [codes[]]
 *  303   SIZE   [keys[]]                                  -                 [sizes[]]
 *  304   REMOVE [force, keys[]]                           -                 [codes[]]
 *  305   REMOVE_REGEX [force, regex]                      -                 [count]
 *  306   REMOVE_ALL [force]                               -                 [count]
 *  307   SAVE_CHECKPOINT [path]                           -                 [size, crc32c]
 *  308   PREPARE_LOAD [token, path, size|-1, crc32c]      -                 []
 *  309   COMMIT_LOAD [token]                              -                 []
 *  310   ABORT_LOAD [token]                               -                 []
 *  311   STATS  []                                        -                 [objects, usedBytes,
 *                                                                            capacityBytes,
 *                                                                            evictedObjects]
 * </pre>
 *
 * Checkpoint loads run in two phases across all nodes ({@link StagedCheckpointLoads}).
 */
final class StoreNodeMessages {
  static final int WRITE = 300;
  static final int READ = 301;
  static final int EXIST = 302;
  static final int SIZE = 303;
  static final int REMOVE = 304;
  static final int REMOVE_REGEX = 305;
  static final int REMOVE_ALL = 306;
  static final int SAVE_CHECKPOINT = 307;
  static final int PREPARE_LOAD = 308;
  static final int COMMIT_LOAD = 309;
  static final int ABORT_LOAD = 310;
  static final int STATS = 311;

  /** The most keys one request may name. */
  static final int MAX_KEYS = 1 << 20;

  private StoreNodeMessages() {}
}
