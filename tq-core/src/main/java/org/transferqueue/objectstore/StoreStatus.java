package org.transferqueue.objectstore;

import org.transferqueue.ErrorCode;

/**
 * Result codes of {@link ObjectStore} calls, with Mooncake Store's numbers.
 *
 * <p>The numbers are part of the contract: {@code 0} is success, every failure is negative, and a
 * constant keeps its number forever. Codes that this project adds lie outside every Mooncake range
 * (from {@code -2001} down). This is not {@link ErrorCode}, which classifies exceptions of the rest
 * of the library.
 */
public enum StoreStatus {
  /** Success. */
  OK(0),
  /** An internal failure. */
  INTERNAL_ERROR(-1),
  /** Insufficient buffer space. */
  BUFFER_OVERFLOW(-10),
  /** A shard index is out of range. */
  SHARD_INDEX_OUT_OF_RANGE(-100),
  /** A segment is unknown. */
  SEGMENT_NOT_FOUND(-101),
  /** A segment is already mounted. */
  SEGMENT_ALREADY_EXISTS(-102),
  /** A client id is unknown. */
  CLIENT_NOT_FOUND(-103),
  /** No space for even one replica, and nothing could be evicted to make some. */
  NO_AVAILABLE_HANDLE(-200),
  /** Client and master versions differ. */
  INVALID_VERSION(-300),
  /** A key is malformed. */
  INVALID_KEY(-400),
  /** A write failed. */
  WRITE_FAIL(-500),
  /**
   * Bad arguments: empty key, size 0, mismatched batch lengths, a destination that is too small, a
   * segment outside every registered region, an overlapping or unknown region, a bad regex, a store
   * that is not set up.
   */
  INVALID_PARAMS(-600),
  /** End or revoke of a write by someone who is no longer its writer (it was preempted). */
  ILLEGAL_CLIENT(-601),
  /** End or revoke with no write in progress. */
  INVALID_WRITE(-700),
  /** A read is invalid. */
  INVALID_READ(-701),
  /** No usable replica. */
  INVALID_REPLICA(-702),
  /** The object exists but is not readable: a write or in-place upsert is in progress. */
  REPLICA_IS_NOT_READY(-703),
  /** The key is absent. */
  OBJECT_NOT_FOUND(-704),
  /** A put found the key already present (or being written). */
  OBJECT_ALREADY_EXISTS(-705),
  /** A non-forced remove found an active read lease. */
  OBJECT_HAS_LEASE(-706),
  /** A read finished after its lease expired; the bytes read must be discarded. */
  LEASE_EXPIRED(-707),
  /** A replication task is in progress on the key. */
  OBJECT_HAS_REPLICATION_TASK(-708),
  /** No replication task is in progress on the key. */
  OBJECT_NO_REPLICATION_TASK(-709),
  /** A replica is unknown. */
  REPLICA_NOT_FOUND(-710),
  /** A replica already exists. */
  REPLICA_ALREADY_EXISTS(-711),
  /** A replica is gone. */
  REPLICA_IS_GONE(-712),
  /** A replica is not in local memory. */
  REPLICA_NOT_IN_LOCAL_MEMORY(-713),
  /** An upsert found a replica busy as the source of a copy or move. */
  OBJECT_REPLICA_BUSY(-714),
  /** Moving the bytes failed. */
  TRANSFER_FAIL(-800),
  /** Checksum verification failed. */
  CHECKSUM_MISMATCH(-801),
  /** A remote call to the master failed. */
  RPC_FAIL(-900),
  /** A remote call to the master timed out. */
  RPC_TIMEOUT(-901),
  /** Not possible in the current status (for example a segment being unmounted). */
  UNAVAILABLE_IN_CURRENT_STATUS(-1010),
  /** Not possible in the current mode. */
  UNAVAILABLE_IN_CURRENT_MODE(-1011),
  /** The operation is not supported. */
  NOT_SUPPORTED(-1012),
  /** Project extension: a conditional operation found another version. */
  VERSION_MISMATCH(-2001),
  /** Project extension: overloaded, retry later. */
  RETRY_LATER(-2002),
  /** Project extension: the store is closed. */
  STORE_CLOSED(-2003);

  private final int code;

  StoreStatus(int code) {
    this.code = code;
  }

  /**
   * The numeric code, as returned by {@link ObjectStore} calls.
   *
   * @return zero or a negative number
   */
  public int code() {
    return code;
  }

  /**
   * Tells whether this is {@link #OK}.
   *
   * @return true for success
   */
  public boolean isOk() {
    return this == OK;
  }

  /**
   * Looks a code up by number. Any non-negative number (a size or count) maps to {@link #OK}.
   *
   * @param code a value returned by an {@link ObjectStore} call
   * @return the code, or {@link #INTERNAL_ERROR} for an unknown negative number; never throws
   */
  public static StoreStatus fromCode(long code) {
    if (code >= 0) {
      return OK;
    }
    for (StoreStatus value : values()) {
      if (value.code == code) {
        return value;
      }
    }
    return INTERNAL_ERROR;
  }
}
