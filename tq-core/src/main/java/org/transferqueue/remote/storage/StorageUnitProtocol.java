package org.transferqueue.remote.storage;

import java.util.List;
import java.util.OptionalLong;
import java.util.function.LongConsumer;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.metrics.StorageOp;
import org.transferqueue.remote.MessageType;
import org.transferqueue.remote.StorageHandlers;
import org.transferqueue.remote.Wire;
import org.transferqueue.storage.simple.StorageUnitStats;

/**
 * The protocol table of the storage-unit service (message types 200-299): one entry per message,
 * with the {@code op_type} the server measures it as; the records below are the codecs of their
 * metadata, used by both {@link RemoteStorageUnit} (encoding requests, decoding replies) and {@link
 * StorageUnitServer} (the reverse), which binds one handler per entry.
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
 * Checkpoint loads run in two phases across all units ({@link
 * org.transferqueue.remote.StagedCheckpointLoads}, with the layouts of {@link
 * org.transferqueue.remote.CheckpointMessages}). The PUT and GET layouts, which describe bodies,
 * are written by {@link RemoteStorageUnit} and read by {@link StorageUnitServer} and {@link
 * UnitRows}.
 */
public enum StorageUnitProtocol implements StorageHandlers.StorageMessageType {
  /** Stores rows as cells, atomically; held under a token or kept at once. */
  PUT(200, StorageOp.PUT_DATA),
  /** Reads cells. */
  GET(201, StorageOp.GET_DATA),
  /** Removes samples, each up to the generation named. */
  CLEAR(202, StorageOp.CLEAR_DATA),
  /** The unit's occupancy. */
  STATS(203, null),
  /** Keeps or takes back held puts. */
  FINISH(204, null),
  /** Writes the unit's checkpoint file on its host. */
  SAVE_CHECKPOINT(205, null),
  /** First phase of a checkpoint load. */
  PREPARE_LOAD(206, null),
  /** Second phase of a checkpoint load: apply. */
  COMMIT_LOAD(207, null),
  /** Second phase of a checkpoint load: discard. */
  ABORT_LOAD(208, null);

  /** The most rows (global indexes) one request may name. */
  static final int MAX_ROWS = 1 << 24;

  /** The most fields one request may name. */
  static final int MAX_FIELDS = 1 << 16;

  /** The highest tensor rank accepted. */
  static final int MAX_RANK = 64;

  private final int typeId;
  private final StorageOp measuredAs;

  StorageUnitProtocol(int typeId, StorageOp measuredAs) {
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
   * The message types of the storage-unit service, in the order of their numbers.
   *
   * @return every entry of the table
   */
  public static List<MessageType> types() {
    return List.of(values());
  }

  /** The error a get gives when a field mixes tensor and object cells, as the embedded units do. */
  static StorageException conflict(String field, String what) {
    return new StorageException(
        ErrorCode.SCHEMA_CONFLICT,
        "field '" + field + "' holds " + what + " among the requested samples");
  }

  /** Reads the generation column of a request: one entry per global index, each at least -1. */
  static long[] readGenerations(Wire.Reader in, long[] gis) {
    long[] generations = in.longs(MAX_ROWS);
    if (generations.length != gis.length) {
      throw in.malformed(generations.length + " generations for " + gis.length + " gis");
    }
    for (long generation : generations) {
      if (generation < -1) {
        throw in.malformed("generation=" + generation);
      }
    }
    return generations;
  }

  /** GET {@code [gis, generations, fieldNames]}. */
  record Get(long[] gis, long[] generations, List<String> fields) {
    byte[] encode() {
      return new Wire.Writer().array(3).longs(gis).longs(generations).strings(fields).toBytes();
    }

    /** Decodes a request; {@code samples} learns the row count as soon as it is known. */
    static Get decode(byte[] metadata, LongConsumer samples) {
      try (Wire.Reader in = new Wire.Reader(metadata, "storage-unit GET")) {
        if (in.array() != 3) {
          throw in.malformed("expected [gis, generations, fieldNames]");
        }
        long[] gis = in.longs(MAX_ROWS);
        samples.accept(gis.length);
        long[] generations = readGenerations(in, gis);
        return new Get(gis, generations, in.strings(MAX_FIELDS));
      }
    }
  }

  /** CLEAR {@code [gis, generations]} → {@code [removed]}. */
  record Clear(long[] gis, long[] generations) {
    byte[] encode() {
      return new Wire.Writer().array(2).longs(gis).longs(generations).toBytes();
    }

    /** Decodes a request; {@code samples} learns the row count as soon as it is known. */
    static Clear decode(byte[] metadata, LongConsumer samples) {
      try (Wire.Reader in = new Wire.Reader(metadata, "storage-unit CLEAR")) {
        if (in.array() != 2) {
          throw in.malformed("expected [gis, generations]");
        }
        long[] gis = in.longs(MAX_ROWS);
        samples.accept(gis.length);
        return new Clear(gis, readGenerations(in, gis));
      }
    }
  }

  /** FINISH {@code [rollback, tokens]} → {@code [decided]}. */
  record Finish(boolean rollback, long[] tokens) {
    byte[] encode() {
      return new Wire.Writer().array(2).bool(rollback).longs(tokens).toBytes();
    }

    static Finish decode(byte[] metadata) {
      try (Wire.Reader in = new Wire.Reader(metadata, "storage-unit FINISH")) {
        if (in.array() != 2) {
          throw in.malformed("expected [rollback, tokens]");
        }
        boolean rollback = in.bool();
        return new Finish(rollback, in.longs(MAX_ROWS));
      }
    }
  }

  /** The reply {@code [held]} of PUT. */
  static byte[] encodeHeld(boolean held) {
    return new Wire.Writer().array(1).bool(held).toBytes();
  }

  /** The reply of STATS: {@code [id, samples, cells, fields, allocated, peak, capacity|-1]}. */
  static byte[] encodeStats(StorageUnitStats s) {
    return new Wire.Writer()
        .array(7)
        .str(s.unitId())
        .i64(s.samples())
        .i64(s.cells())
        .i64(s.fields())
        .i64(s.allocatedBytes())
        .i64(s.peakBytes())
        .i64(s.capacitySamples().orElse(-1))
        .toBytes();
  }

  /** Reads the reply of STATS. */
  static StorageUnitStats decodeStats(byte[] metadata) {
    try (Wire.Reader in = new Wire.Reader(metadata, "STATS reply")) {
      in.array();
      String id = in.str();
      long samples = in.i64();
      long cells = in.i64();
      int fields = (int) in.i64();
      long allocated = in.i64();
      long peak = in.i64();
      long capacity = in.i64();
      return new StorageUnitStats(
          id,
          samples,
          cells,
          fields,
          allocated,
          peak,
          capacity < 0 ? OptionalLong.empty() : OptionalLong.of(capacity));
    }
  }
}
