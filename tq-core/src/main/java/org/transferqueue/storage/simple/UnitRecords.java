package org.transferqueue.storage.simple;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.PackedValueCodec;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.journal.JournalRecord;
import org.transferqueue.journal.RecordHeader;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.TensorUtils;

/**
 * The journal records of a storage unit, and their replay. Tensor bytes go into a record's payload
 * as views of the unit's cell blocks (written by the journal straight from them); object cells as
 * packed values. All numbers little-endian ({@link RecordHeader}).
 *
 * <pre>
 *  PUT (1)      header  = sampleCount u32 | (gi i64 | generation i64) x sampleCount
 *                         | fieldCount u32 | field*
 *               field   = name str | kind u8 (0 dense, 1 jagged, 2 object) | dtype u8 (0xFF object)
 *                         | row x sampleCount
 *               row     = rank u8 | shape i64 x rank        (tensor; bytes = numel x dtype size)
 *                       | packedLength i64                  (object)
 *               payload = the rows' bytes, field by field, row by row
 *  RESTORE (2)  what a rollback of a held put changed (effects, not a reference to the put, so that
 *               a checkpoint between the put and its rollback needs nothing of the put):
 *               header  = cellCount u32 | (gi i64 | field str | action u8 (0 removed, 1 set)
 *                         | [set: kind u8 | dtype u8 | rank u8 | shape i64 x rank | bytes i64])*
 *                         | removedFieldCount u32 | str* | removedSampleCount u32 | gi i64*
 *               payload = the set cells' bytes in order
 *  CLEAR (3)    header  = sampleCount u32 | (gi i64 | generation i64) x sampleCount; no payload
 * </pre>
 *
 * <p>Stateless.
 */
final class UnitRecords {
  static final short PUT = 1;
  static final short RESTORE = 2;
  static final short CLEAR = 3;

  private static final int OBJECT_KIND = 2;
  private static final int OBJECT_DTYPE = 0xFF;
  private static final int MAX_RANK = 64;

  private UnitRecords() {}

  /** A record and the cell blocks its payload views, retained until the journal has written it. */
  record Prepared(JournalRecord record, List<CellBlock> retained) {
    /** Drops the references taken for the record. */
    void release() {
      retained.forEach(CellBlock::release);
    }
  }

  /** What a rollback changed, collected by {@link CommittedPut#restore}. */
  static final class Restored {
    final List<Long> gis = new ArrayList<>();
    final List<String> fields = new ArrayList<>();
    final List<CellBlock> blocks = new ArrayList<>();
    final List<Integer> rows = new ArrayList<>();
    final List<String> removedFields = new ArrayList<>();
    final List<Long> removedSamples = new ArrayList<>();

    void cell(long gi, String field, CellBlock block, int row) {
      gis.add(gi);
      fields.add(field);
      blocks.add(block);
      rows.add(row);
    }

    boolean isEmpty() {
      return gis.isEmpty() && removedFields.isEmpty() && removedSamples.isEmpty();
    }
  }

  /** The PUT record of a commit: row {@code j} of {@code blocks[f]} is cell (gis[j], fields[f]). */
  static Prepared put(long[] gis, long[] generations, String[] fields, CellBlock[] blocks) {
    RecordHeader header = samples(gis, generations).i32(fields.length);
    List<MemorySegment> payload = new ArrayList<>();
    List<CellBlock> retained = new ArrayList<>(blocks.length);
    try {
      for (int f = 0; f < fields.length; f++) {
        CellBlock block = blocks[f];
        block.retain();
        retained.add(block);
        header.string(fields[f]);
        if (block.kind() == CellBlock.Kind.OBJECT) {
          header.u8(OBJECT_KIND).u8(OBJECT_DTYPE);
          for (int j = 0; j < gis.length; j++) {
            MemorySegment packed = pack(block, j);
            header.i64(packed.byteSize());
            payload.add(packed);
          }
          continue;
        }
        header.u8(block.kind() == CellBlock.Kind.DENSE ? 0 : 1).u8(block.dtype().code());
        for (int j = 0; j < gis.length; j++) {
          long[] shape = block.rowShape(j);
          header.u8(shape.length);
          for (long dim : shape) {
            header.i64(dim);
          }
        }
        // The rows lie back to back in the block: one view, one entry of the gathering write.
        payload.add(block.rowsSegment(0, gis.length));
      }
      return new Prepared(JournalRecord.of(PUT, header.toBytes(), payload), retained);
    } catch (RuntimeException e) {
      retained.forEach(CellBlock::release);
      throw e;
    }
  }

  /** The RESTORE record of a rollback's effects; retains the restored blocks. */
  static Prepared restore(Restored restored) {
    RecordHeader header = new RecordHeader().i32(restored.gis.size());
    List<MemorySegment> payload = new ArrayList<>();
    List<CellBlock> retained = new ArrayList<>();
    try {
      for (int i = 0; i < restored.gis.size(); i++) {
        header.i64(restored.gis.get(i)).string(restored.fields.get(i));
        CellBlock block = restored.blocks.get(i);
        if (block == null) {
          header.u8(0);
          continue;
        }
        block.retain();
        retained.add(block);
        int row = restored.rows.get(i);
        header.u8(1);
        if (block.kind() == CellBlock.Kind.OBJECT) {
          MemorySegment packed = pack(block, row);
          header.u8(OBJECT_KIND).u8(OBJECT_DTYPE).u8(0).i64(packed.byteSize());
          payload.add(packed);
          continue;
        }
        long[] shape = block.rowShape(row);
        header.u8(block.kind() == CellBlock.Kind.DENSE ? 0 : 1).u8(block.dtype().code());
        header.u8(shape.length);
        for (long dim : shape) {
          header.i64(dim);
        }
        header.i64(block.rowBytes(row));
        payload.add(block.rowSegment(row));
      }
      header.i32(restored.removedFields.size());
      restored.removedFields.forEach(header::string);
      header.i32(restored.removedSamples.size());
      restored.removedSamples.forEach(header::i64);
      return new Prepared(JournalRecord.of(RESTORE, header.toBytes(), payload), retained);
    } catch (RuntimeException e) {
      retained.forEach(CellBlock::release);
      throw e;
    }
  }

  /** The CLEAR record of a clear request. */
  static Prepared clear(long[] gis, long[] generations) {
    return new Prepared(
        JournalRecord.of(CLEAR, samples(gis, generations).toBytes(), List.of()), List.of());
  }

  private static RecordHeader samples(long[] gis, long[] generations) {
    RecordHeader header = new RecordHeader().i32(gis.length);
    for (int j = 0; j < gis.length; j++) {
      header.i64(gis[j]).i64(generations[j]);
    }
    return header;
  }

  private static MemorySegment pack(CellBlock block, int row) {
    EncodedValue encoded = ValueEncoder.encode(ObjectCells.plain(block.value(row)));
    MemorySegment packed = MemorySegment.ofArray(new byte[Math.toIntExact(encoded.packedSize())]);
    encoded.packInto(packed);
    return packed;
  }

  // ---- replay ----

  /**
   * Applies one record to a unit (which has no journal attached while it recovers).
   *
   * @param unit the unit
   * @param lsn the record's LSN, for messages
   * @param type the record type
   * @param header the header bytes
   * @param payload the payload (a scratch segment, copied here)
   */
  static void apply(
      StorageUnit unit, long lsn, short type, ByteBuffer header, MemorySegment payload) {
    RecordHeader.Reader in =
        new RecordHeader.Reader(header, "storage unit " + unit.id() + " journal record " + lsn);
    switch (type) {
      case PUT -> applyPut(unit, in, payload);
      case RESTORE -> applyRestore(unit, in, payload);
      case CLEAR -> {
        long[][] samples = readSamples(in);
        unit.clear(samples[0], samples[1]);
      }
      default -> throw in.malformed("has the unknown type " + type);
    }
  }

  private static long[][] readSamples(RecordHeader.Reader in) {
    int n = in.count(16);
    long[] gis = new long[n];
    long[] generations = new long[n];
    for (int j = 0; j < n; j++) {
      gis[j] = in.i64();
      generations[j] = in.i64();
    }
    return new long[][] {gis, generations};
  }

  private static void applyPut(StorageUnit unit, RecordHeader.Reader in, MemorySegment payload) {
    long[][] samples = readSamples(in);
    int rows = samples[0].length;
    int fieldCount = in.count(6);
    List<CellColumn> columns = new ArrayList<>(fieldCount);
    List<Object> decoded = new ArrayList<>();
    long at = 0;
    try {
      for (int f = 0; f < fieldCount; f++) {
        String field = in.string();
        int kind = in.u8();
        int dtypeCode = in.u8();
        if (kind == OBJECT_KIND) {
          List<Object> values = new ArrayList<>(rows);
          for (int j = 0; j < rows; j++) {
            long length = in.i64();
            MemorySegment packed = slice(in, payload, at, length);
            at += length;
            Object value =
                PackedValueCodec.unpackCopying(packed, "field '" + field + "'", unit.allocator());
            decoded.add(value);
            values.add(value);
          }
          columns.add(CellColumn.objects(field, values));
          continue;
        }
        DType dtype = dtype(in, dtypeCode);
        List<long[]> shapes = new ArrayList<>(rows);
        List<MemorySegment> bytes = new ArrayList<>(rows);
        for (int j = 0; j < rows; j++) {
          long[] shape = shape(in, in.u8());
          long length = TensorUtils.nbytes(dtype, shape);
          shapes.add(shape);
          bytes.add(slice(in, payload, at, length));
          at += length;
        }
        columns.add(
            CellColumn.tensors(
                field, kind == 0 ? ColumnKind.DENSE : ColumnKind.JAGGED, dtype, shapes, bytes));
      }
      if (at != payload.byteSize() || !in.atEnd()) {
        throw in.malformed("does not describe its payload of " + payload.byteSize() + " bytes");
      }
      unit.putCells(samples[0], samples[1], columns).close();
    } finally {
      decoded.forEach(ValueDecoder::closeTensors);
    }
  }

  private static void applyRestore(
      StorageUnit unit, RecordHeader.Reader in, MemorySegment payload) {
    BufferAllocator allocator = unit.allocator();
    int count = in.count(13);
    Restored restored = new Restored();
    long at = 0;
    try {
      for (int i = 0; i < count; i++) {
        long gi = in.i64();
        String field = in.string();
        if (in.u8() == 0) {
          restored.cell(gi, field, null, 0);
          continue;
        }
        int kind = in.u8();
        int dtypeCode = in.u8();
        long[] shape = shape(in, in.u8());
        long length = in.i64();
        MemorySegment bytes = slice(in, payload, at, length);
        at += length;
        restored.cell(gi, field, cell(in, allocator, field, kind, dtypeCode, shape, bytes), 0);
      }
      int removedFields = in.count(4);
      for (int i = 0; i < removedFields; i++) {
        restored.removedFields.add(in.string());
      }
      int removedSamples = in.count(8);
      for (int i = 0; i < removedSamples; i++) {
        restored.removedSamples.add(in.i64());
      }
      if (at != payload.byteSize() || !in.atEnd()) {
        throw in.malformed("does not describe its payload of " + payload.byteSize() + " bytes");
      }
      unit.applyRestore(restored);
    } finally {
      // applyRestore took its own references of the blocks it installed.
      restored.blocks.forEach(
          b -> {
            if (b != null) {
              b.release();
            }
          });
    }
  }

  private static CellBlock cell(
      RecordHeader.Reader in,
      BufferAllocator allocator,
      String field,
      int kind,
      int dtypeCode,
      long[] shape,
      MemorySegment bytes) {
    if (kind == OBJECT_KIND) {
      Object value = PackedValueCodec.unpackCopying(bytes, "field '" + field + "'", allocator);
      try {
        return CellBlock.objectCell(allocator, value, field);
      } finally {
        ValueDecoder.closeTensors(value);
      }
    }
    DType dtype = dtype(in, dtypeCode);
    if (TensorUtils.nbytes(dtype, shape) != bytes.byteSize() || kind > 1) {
      throw in.malformed("has a cell of field '" + field + "' whose bytes do not fit its shape");
    }
    NativeBuffer buffer = allocator.allocate(bytes.byteSize());
    MemorySegment.copy(bytes, 0, buffer.segment(), 0, bytes.byteSize());
    return CellBlock.tensorCell(
        kind == 0 ? CellBlock.Kind.DENSE : CellBlock.Kind.JAGGED, dtype, buffer, shape);
  }

  private static DType dtype(RecordHeader.Reader in, int code) {
    try {
      return DType.fromCode(code);
    } catch (RuntimeException e) {
      throw in.malformed("has the unknown dtype code " + code);
    }
  }

  private static long[] shape(RecordHeader.Reader in, int rank) {
    if (rank > MAX_RANK) {
      throw in.malformed("has a shape of rank " + rank);
    }
    long[] shape = new long[rank];
    for (int d = 0; d < rank; d++) {
      shape[d] = in.i64();
      if (shape[d] < 0) {
        throw in.malformed("has a negative dimension " + shape[d]);
      }
    }
    return shape;
  }

  private static MemorySegment slice(
      RecordHeader.Reader in, MemorySegment payload, long at, long length) {
    if (length < 0 || at + length > payload.byteSize()) {
      throw in.malformed("names bytes " + at + ".." + (at + length) + " beyond its payload");
    }
    return payload.asSlice(at, length);
  }
}
