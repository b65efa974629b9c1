package org.transferqueue.storage.simple;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.transferqueue.StorageException;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.PackedValueCodec;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.storage.checkpoint.CheckpointFileReader;
import org.transferqueue.storage.checkpoint.CheckpointFileWriter;
import org.transferqueue.storage.checkpoint.FileDigest;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.TensorUtils;

/**
 * The checkpoint file of one storage unit: every cell, written straight from and read straight into
 * off-heap memory; object cells in the packed value encoding of the codec package. No Java
 * serialization. All integers little-endian.
 *
 * <pre>
 *  file   = header samples field*
 *  header = magic u32 'TQSU' | version u32 (2) | idLength u32 | unit id UTF-8
 *           | capacity i64 (-1 unlimited) | fieldCount u32
 *  samples= sampleCount u32 | (gi i64 | generation i64 (-1 unknown))*    (absent in version 1)
 *  field  = nameLength u32 | name UTF-8 | cellCount u32 | cell*
 *  cell   = gi i64 | kind u8 (0 dense, 1 jagged, 2 object) | dtype u8 (code, 0xFF object)
 *           | rank u8 | reserved u8 | shape i64 x rank | byteLength i64 | bytes
 *             (tensor bytes row-major; object: a packed value)
 * </pre>
 *
 * <p>A file is written to a temporary sibling and moved into place, so a crash never leaves a
 * half-written checkpoint under the final name; its CRC32C is computed while writing and checked
 * while reading (one pass each way). Every length read is checked against the bytes left in the
 * file before memory is allocated; a bad file is {@code CORRUPT_DATA}. Stateless.
 */
final class UnitCheckpoint {
  static final int MAGIC = 0x55535154; // "TQSU" little-endian
  static final int VERSION = 2;

  /** The version before sample generations; read as samples of unknown generation. */
  static final int VERSION_WITHOUT_GENERATIONS = 1;

  static final int OBJECT_DTYPE = 0xFF;
  private static final int MAX_RANK = 64;

  private UnitCheckpoint() {}

  /** One cell to write: a retained block and the row inside it. */
  record CellRef(long gi, CellBlock block, int row) {}

  /** A field's cells, as read from a file or as collected for writing. */
  record FieldCellsData(String field, List<CellRef> cells) {}

  /**
   * The contents of a checkpoint file; owns the blocks until installed or closed.
   *
   * @param generations the generation of every held sample by global index (-1 unknown)
   */
  record Contents(
      String unitId, long capacity, List<FieldCellsData> fields, Map<Long, Long> generations)
      implements AutoCloseable {
    @Override
    public void close() {
      for (FieldCellsData field : fields) {
        field.cells().forEach(c -> c.block().release());
      }
    }
  }

  /**
   * Writes {@code contents} to {@code file}, computing the file's CRC32C on the way; the blocks
   * stay owned by the caller. Object cells are packed in scratch memory from {@code allocator}.
   *
   * @return the size and checksum of the written file
   */
  static FileDigest write(Path file, Contents contents, BufferAllocator allocator)
      throws IOException {
    Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
    FileDigest digest;
    try (CheckpointFileWriter out = CheckpointFileWriter.create(temporary)) {
      out.i32(MAGIC).i32(VERSION).string(contents.unitId());
      out.i64(contents.capacity()).i32(contents.fields().size());
      out.i32(contents.generations().size());
      for (Map.Entry<Long, Long> sample : new TreeMap<>(contents.generations()).entrySet()) {
        out.i64(sample.getKey()).i64(sample.getValue());
      }
      for (FieldCellsData field : contents.fields()) {
        out.string(field.field()).i32(field.cells().size());
        for (CellRef cell : field.cells()) {
          writeCell(out, cell, allocator);
        }
      }
      digest = out.finish();
    }
    Files.move(
        temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return digest;
  }

  private static void writeCell(CheckpointFileWriter out, CellRef cell, BufferAllocator allocator)
      throws IOException {
    CellBlock block = cell.block();
    if (block.kind() == CellBlock.Kind.OBJECT) {
      EncodedValue encoded = ValueEncoder.encode(ObjectCells.plain(block.value(cell.row())));
      long size = encoded.packedSize();
      out.i64(cell.gi()).u8(2).u8(OBJECT_DTYPE).u8(0).u8(0).i64(size);
      try (NativeBuffer packed = allocator.allocate(size)) {
        encoded.packInto(packed.segment());
        out.bytes(packed.segment());
      }
      return;
    }
    long[] shape = block.rowShape(cell.row());
    out.i64(cell.gi())
        .u8(block.kind() == CellBlock.Kind.DENSE ? 0 : 1)
        .u8(block.dtype().code())
        .u8(shape.length)
        .u8(0);
    for (long dim : shape) {
      out.i64(dim);
    }
    out.i64(block.rowBytes(cell.row()));
    out.bytes(block.rowSegment(cell.row()));
  }

  /**
   * Reads a checkpoint into blocks of {@code allocator}, verifying the file's CRC32C in the same
   * pass when {@code digests} knows it.
   *
   * @param digests the manifest's digests (the file is marked verified there)
   * @return the contents, which the caller owns
   * @throws StorageException with {@code NOT_FOUND} for a missing file, {@code CORRUPT_DATA} for a
   *     malformed or altered one, {@code STORAGE_ERROR} for an I/O failure
   */
  static Contents read(Path file, BufferAllocator allocator, CheckpointDigests digests) {
    List<FieldCellsData> fields = new ArrayList<>();
    Map<Long, Long> generations = new HashMap<>();
    try (CheckpointFileReader in = CheckpointFileReader.open(file, digests.expected(file))) {
      if (in.i32() != MAGIC) {
        throw in.corrupt("not a storage unit checkpoint (bad magic)");
      }
      int version = in.i32();
      if (version != VERSION && version != VERSION_WITHOUT_GENERATIONS) {
        throw in.corrupt("unsupported checkpoint version " + version);
      }
      String unitId = in.string();
      long capacity = in.i64();
      int fieldCount = in.count("fieldCount");
      int sampleCount = version == VERSION ? in.count("sampleCount") : 0;
      for (int i = 0; i < sampleCount; i++) {
        long gi = in.i64();
        long generation = in.i64();
        if (gi < 0 || generation < -1) {
          throw in.corrupt("sample " + gi + " has generation " + generation);
        }
        generations.put(gi, generation);
      }
      for (int f = 0; f < fieldCount; f++) {
        String field = in.string();
        int cellCount = in.count("cellCount of field '" + field + "'");
        List<CellRef> cells = new ArrayList<>(Math.min(cellCount, 1 << 16));
        fields.add(new FieldCellsData(field, cells));
        for (int c = 0; c < cellCount; c++) {
          cells.add(readCell(in, field, allocator));
        }
      }
      in.finish(digests);
      return new Contents(unitId, capacity, fields, generations);
    } catch (RuntimeException e) {
      new Contents("", -1, fields, Map.of()).close();
      throw e;
    }
  }

  private static CellRef readCell(
      CheckpointFileReader in, String field, BufferAllocator allocator) {
    long gi = in.i64();
    int kind = in.u8();
    int dtypeCode = in.u8();
    int rank = in.u8();
    in.u8();
    if (rank > MAX_RANK || kind > 2) {
      throw in.corrupt("cell " + gi + " of field '" + field + "': kind=" + kind + " rank=" + rank);
    }
    long[] shape = new long[rank];
    for (int d = 0; d < rank; d++) {
      shape[d] = in.i64();
    }
    long bytes = in.length("byteLength of cell " + gi + " of field '" + field + "'");
    NativeBuffer buffer = allocator.allocate(bytes);
    try {
      in.readInto(buffer.segment());
      if (kind == 2) {
        Object decoded =
            PackedValueCodec.unpackCopying(
                buffer.segment(), "cell " + gi + " of field '" + field + "'", allocator);
        try {
          return new CellRef(gi, CellBlock.objectCell(allocator, decoded, field), 0);
        } finally {
          ValueDecoder.closeTensors(decoded);
          buffer.close();
        }
      }
      DType dtype = DType.fromCode(dtypeCode);
      if (TensorUtils.nbytes(dtype, shape) != bytes) {
        throw in.corrupt(
            "cell " + gi + " of field '" + field + "' has " + bytes + " bytes for shape");
      }
      CellBlock.Kind cellKind = kind == 0 ? CellBlock.Kind.DENSE : CellBlock.Kind.JAGGED;
      return new CellRef(gi, CellBlock.tensorCell(cellKind, dtype, buffer, shape), 0);
    } catch (RuntimeException e) {
      buffer.close();
      throw e;
    }
  }
}
