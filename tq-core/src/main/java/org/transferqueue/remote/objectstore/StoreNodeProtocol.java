package org.transferqueue.remote.objectstore;

import java.util.List;
import java.util.function.LongConsumer;
import org.transferqueue.TqException;
import org.transferqueue.metrics.StorageOp;
import org.transferqueue.objectstore.ReplicateConfig;
import org.transferqueue.objectstore.StoreStatistics;
import org.transferqueue.remote.MessageType;
import org.transferqueue.remote.StorageHandlers;
import org.transferqueue.remote.Wire;
import org.transferqueue.transport.Response;

/**
 * The protocol table of the object-store node service (message types 300-399): one entry per
 * message, with the {@code op_type} the server measures it as; the records below are the codecs of
 * their metadata, used by both {@link RemoteObjectStore} (encoding requests, decoding replies) and
 * {@link StoreNodeServer} (the reverse), which binds one handler per entry. Results are the
 * engine's numeric Mooncake codes, per key.
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
 * Checkpoint loads run in two phases across all nodes ({@link
 * org.transferqueue.remote.StagedCheckpointLoads}, with the layouts of {@link
 * org.transferqueue.remote.CheckpointMessages}).
 */
public enum StoreNodeProtocol implements StorageHandlers.StorageMessageType {
  /** Writes objects, one body per key. */
  WRITE(300, StorageOp.PUT_DATA),
  /** Reads objects into reply bodies. */
  READ(301, StorageOp.GET_DATA),
  /** Whether keys exist. */
  EXIST(302, null),
  /** The sizes of objects. */
  SIZE(303, null),
  /** Removes keys. */
  REMOVE(304, StorageOp.CLEAR_DATA),
  /** Removes the keys a regular expression matches. */
  REMOVE_REGEX(305, StorageOp.CLEAR_DATA),
  /** Removes every object. */
  REMOVE_ALL(306, StorageOp.CLEAR_DATA),
  /** Writes the node's checkpoint file on its host. */
  SAVE_CHECKPOINT(307, null),
  /** First phase of a checkpoint load. */
  PREPARE_LOAD(308, null),
  /** Second phase of a checkpoint load: apply. */
  COMMIT_LOAD(309, null),
  /** Second phase of a checkpoint load: discard. */
  ABORT_LOAD(310, null),
  /** The node's objects, bytes and evictions. */
  STATS(311, null);

  /** The most keys one request may name. */
  static final int MAX_KEYS = 1 << 20;

  private final int typeId;
  private final StorageOp measuredAs;

  StoreNodeProtocol(int typeId, StorageOp measuredAs) {
    this.typeId = typeId;
    this.measuredAs = measuredAs;
  }

  @Override
  public int typeId() {
    return typeId;
  }

  @Override
  public StorageOp measuredAs() {
    return measuredAs;
  }

  /**
   * The message types of the store-node service, in the order of their numbers.
   *
   * @return every entry of the table
   */
  public static List<MessageType> types() {
    return List.of(values());
  }

  /** WRITE {@code [upsert, replicaNum, hardPin, softPin, keys]}, one body per key. */
  record Write(boolean upsert, ReplicateConfig config, List<String> keys) {
    byte[] encode() {
      return new Wire.Writer()
          .array(5)
          .bool(upsert)
          .i64(config.replicaNum())
          .bool(config.withHardPin())
          .bool(config.withSoftPin())
          .strings(keys)
          .toBytes();
    }

    static Write decode(byte[] metadata, int bodyCount) {
      try (Wire.Reader in = new Wire.Reader(metadata, "store-node WRITE")) {
        if (in.array() != 5) {
          throw in.malformed("expected [upsert, replicaNum, hardPin, softPin, keys]");
        }
        boolean upsert = in.bool();
        int replicaNum = in.i32();
        boolean hardPin = in.bool();
        boolean softPin = in.bool();
        List<String> keys = in.strings(MAX_KEYS);
        if (keys.size() != bodyCount) {
          throw in.malformed("keys=" + keys.size() + " != bodies=" + bodyCount);
        }
        try {
          return new Write(upsert, new ReplicateConfig(replicaNum, hardPin, softPin), keys);
        } catch (TqException e) {
          throw in.malformed(e.getMessage());
        }
      }
    }
  }

  /** READ {@code [keys, capacities]} (-1 = any size) → {@code [results]}, one body per key. */
  record Read(List<String> keys, long[] capacities) {
    byte[] encode() {
      return new Wire.Writer().array(2).strings(keys).longs(capacities).toBytes();
    }

    /** Decodes a request; {@code samples} learns the key count as soon as it is known. */
    static Read decode(byte[] metadata, LongConsumer samples) {
      try (Wire.Reader in = new Wire.Reader(metadata, "store-node READ")) {
        if (in.array() != 2) {
          throw in.malformed("expected [keys, capacities]");
        }
        List<String> keys = in.strings(MAX_KEYS);
        samples.accept(keys.size());
        long[] capacities = in.longs(MAX_KEYS);
        if (capacities.length != keys.size()) {
          throw in.malformed("keys=" + keys.size() + " != capacities=" + capacities.length);
        }
        return new Read(keys, capacities);
      }
    }
  }

  /** The reply {@code [results]} of READ. */
  static byte[] encodeResults(long[] results) {
    return new Wire.Writer().array(1).longs(results).toBytes();
  }

  /** Reads the reply of READ: one result and one body per key asked for. */
  static long[] decodeResults(Response response, int expected) {
    try (Wire.Reader in = new Wire.Reader(response.metadata(), "READ reply")) {
      in.array();
      long[] read = in.longs(MAX_KEYS);
      if (read.length != expected || response.bodyCount() != expected) {
        throw in.malformed("results=" + read.length + ", bodies=" + response.bodyCount());
      }
      return read;
    }
  }

  /** EXIST and SIZE {@code [keys]}. */
  record Keys(List<String> keys) {
    byte[] encode() {
      return new Wire.Writer().array(1).strings(keys).toBytes();
    }

    static Keys decode(byte[] metadata, String what) {
      try (Wire.Reader in = new Wire.Reader(metadata, what)) {
        if (in.array() != 1) {
          throw in.malformed("expected [keys]");
        }
        return new Keys(in.strings(MAX_KEYS));
      }
    }
  }

  /** REMOVE {@code [force, keys]}. */
  record Remove(boolean force, List<String> keys) {
    byte[] encode() {
      return new Wire.Writer().array(2).bool(force).strings(keys).toBytes();
    }

    static Remove decode(byte[] metadata) {
      try (Wire.Reader in = new Wire.Reader(metadata, "store-node REMOVE")) {
        if (in.array() != 2) {
          throw in.malformed("expected [force, keys]");
        }
        boolean force = in.bool();
        return new Remove(force, in.strings(MAX_KEYS));
      }
    }
  }

  /** REMOVE_REGEX {@code [force, regex]} → {@code [count]}. */
  record RemoveRegex(boolean force, String regex) {
    byte[] encode() {
      return new Wire.Writer().array(2).bool(force).str(regex).toBytes();
    }

    static RemoveRegex decode(byte[] metadata) {
      try (Wire.Reader in = new Wire.Reader(metadata, "store-node REMOVE_REGEX")) {
        if (in.array() != 2) {
          throw in.malformed("expected [force, regex]");
        }
        boolean force = in.bool();
        return new RemoveRegex(force, in.str());
      }
    }
  }

  /** REMOVE_ALL {@code [force]} → {@code [count]}. */
  record RemoveAll(boolean force) {
    byte[] encode() {
      return new Wire.Writer().array(1).bool(force).toBytes();
    }

    static RemoveAll decode(byte[] metadata) {
      try (Wire.Reader in = new Wire.Reader(metadata, "store-node REMOVE_ALL")) {
        if (in.array() != 1) {
          throw in.malformed("expected [force]");
        }
        return new RemoveAll(in.bool());
      }
    }
  }

  /** The reply {@code [codes]} of WRITE, EXIST and REMOVE, and {@code [sizes]} of SIZE. */
  static byte[] encodeCodes(int[] codes) {
    Wire.Writer out = new Wire.Writer().array(1).array(codes.length);
    for (int code : codes) {
      out.i64(code);
    }
    return out.toBytes();
  }

  /** Reads a reply {@code [codes]} or {@code [sizes]}, at most {@code max} of them. */
  static long[] decodeCodes(byte[] metadata, String what, int max) {
    try (Wire.Reader in = new Wire.Reader(metadata, what)) {
      in.array();
      return in.longs(max);
    }
  }

  /** The reply of STATS: {@code [objects, usedBytes, capacityBytes, evictedObjects]}. */
  static byte[] encodeStats(StoreStatistics stats) {
    return new Wire.Writer()
        .array(4)
        .i64(stats.objects())
        .i64(stats.usedBytes())
        .i64(stats.capacityBytes())
        .i64(stats.evictedObjects())
        .toBytes();
  }

  /** Reads the reply of STATS. */
  static StoreStatistics decodeStats(byte[] metadata) {
    try (Wire.Reader in = new Wire.Reader(metadata, "store-node STATS reply")) {
      in.array();
      return new StoreStatistics(in.i64(), in.i64(), in.i64(), in.i64());
    }
  }
}
