package org.transferqueue.remote;

/**
 * Message types of the controller service (100-199). Each request's metadata is one msgpack array
 * of the operation's arguments, each reply's metadata the msgpack of its result (nil for "absent"
 * and for operations without a result), both in {@link MetaCodec} layout. Errors travel as
 * transport error replies carrying the controller's {@link org.transferqueue.ErrorCode}.
 */
final class ControllerMessages {
  /** {@code []} → controller id. */
  static final int CONTROLLER_ID = 100;

  /** {@code [partitionId]} → created. */
  static final int CREATE_PARTITION = 101;

  /** {@code []} → partition ids. */
  static final int LIST_PARTITIONS = 102;

  /** {@code [partitionId]} → index set. */
  static final int PARTITION_INDEX_RANGE = 103;

  /** {@code [ProductionUpdate]} → nil (the storage notification). */
  static final int UPDATE_PRODUCTION = 104;

  /** {@code [partitionId, fields]} → production status or nil. */
  static final int GET_PRODUCTION = 105;

  /** {@code [partitionId, fields, taskName]} → index set. */
  static final int SCAN_READY = 106;

  /** {@code [partitionId, taskName]} → consumption status or nil. */
  static final int GET_CONSUMPTION = 107;

  /** {@code [partitionId, taskName or nil]} → nil. */
  static final int RESET_CONSUMPTION = 108;

  /** {@code [GetMetadataRequest]} → batch metadata; a blocking fetch carries its timeout. */
  static final int GET_METADATA = 109;

  /** {@code [partitionId]} → batch metadata or nil. */
  static final int GET_PARTITION_META = 110;

  /** {@code [TagUpdate]} → updated count. */
  static final int SET_TAGS = 111;

  /** {@code [partitionId, indexes]} → records by index. */
  static final int GET_TAGS = 112;

  /** {@code [partitionId, indexes, fields]} → records by index. */
  static final int GET_BACKEND_META = 113;

  /** {@code [partitionId]} → existed. */
  static final int CLEAR_PARTITION = 114;

  /** {@code [ClearSamplesRequest]} → removed count. */
  static final int CLEAR_SAMPLES = 115;

  /** {@code [partitionId, keys, create]} → batch metadata. */
  static final int RESOLVE_KEYS = 116;

  /** {@code [partitionId, indexes]} → keys (nil entries for samples without key). */
  static final int RESOLVE_INDEXES = 117;

  /** {@code [partitionId or nil]} → key listing. */
  static final int LIST_KEYS = 118;

  /** {@code [partitionId]} → partition statistics or nil. */
  static final int PARTITION_STATISTICS = 119;

  /** {@code []} → controller statistics. */
  static final int STATISTICS = 120;

  /**
   * {@code [partitionId, fields, indexes, generations]} → nil, or the error the production update
   * of such a put would get (unknown partition, stale generation, foreign index, schema).
   */
  static final int CHECK_PUT = 121;

  /** {@code []} → the controller state as one binary in the ControllerStateCodec encoding. */
  static final int SNAPSHOT_STATE = 122;

  /** {@code [state binary]} → nil, or the decode or restore error (nothing changes then). */
  static final int RESTORE_STATE = 123;

  /**
   * {@code [partitionId, keys, fields, sampleCount]} → {@code [batch metadata, created indexes]},
   * or the schema error (nothing is created then).
   */
  static final int RESOLVE_KEYS_FOR_PUT = 124;

  /**
   * {@code [partitionId, indexes, fields or nil]} → batch metadata of those indexes that are active
   * samples of the partition, in request order.
   */
  static final int GET_SAMPLE_META = 125;

  /** {@code []} → {@code host:port} of the controller's Prometheus endpoint, or nil for none. */
  static final int METRICS_ENDPOINT = 126;

  /**
   * {@code [ClearSamplesRequest]} -> {@code int} newly marked: the first step of a clear; marked
   * samples are handed out by no fetch until {@code CLEAR_SAMPLES} or {@code CLEAR_PARTITION} frees
   * them.
   */
  static final int MARK_CLEARING = 127;

  private ControllerMessages() {}
}
