package org.transferqueue.storage.simple;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.PackedValueCodec;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.TensorUtils;

/**
 * The checkpoint file of one storage unit: every cell, written straight from and read straight into
 * off-heap memory; object cells in the packed value encoding of the codec package. No Java
 * serialization. All integers little-endian.
 *
 * <pre>
 *  file   = header field*
 *  header = magic u32 'TQSU' | version u32 (1) | idLength u32 | unit id UTF-8
 *           | capacity i64 (-1 unlimited) | fieldCount u32
 *  field  = nameLength u32 | name UTF-8 | cellCount u32 | cell*
 *  cell   = gi i64 | kind u8 (0 dense, 1 jagged, 2 object) | dtype u8 (code, 0xFF object)
 *           | rank u8 | reserved u8 | shape i64 x rank | byteLength i64 | bytes
 *             (tensor bytes row-major; object: a packed value)
 * </pre>
 *
 * <p>A file is written to a temporary sibling and moved into place, so a crash never leaves a
 * half-written checkpoint under the final name. Every length read is checked against the bytes left
 * in the file before memory is allocated; a bad file is {@code CORRUPT_DATA}. Stateless.
 */
final class UnitCheckpoint {
  static final int MAGIC = 0x55535154; // "TQSU" little-endian
  static final int VERSION = 1;
  static final int OBJECT_DTYPE = 0xFF;
  private static final int MAX_NAME_BYTES = 1 << 16;
  private static final int MAX_RANK = 64;

  private UnitCheckpoint() {}

  /** One cell to write: a retained block and the row inside it. */
  record CellRef(long gi, CellBlock block, int row) {}

  /** A field's cells, as read from a file or as collected for writing. */
  record FieldCellsData(String field, List<CellRef> cells) {}

  /** The contents of a checkpoint file; owns the blocks until installed or closed. */
  record Contents(String unitId, long capacity, List<FieldCellsData> fields)
      implements AutoCloseable {
    @Override
    public void close() {
      for (FieldCellsData field : fields) {
        field.cells().forEach(c -> c.block().release());
      }
    }
  }

  /**
   * Writes {@code contents} to {@code file}; the blocks stay owned by the caller. Object cells are
   * packed in scratch memory from {@code allocator}.
   */
  static void write(Path file, Contents contents, BufferAllocator allocator) throws IOException {
    Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel channel =
        FileChannel.open(
            temporary,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE)) {
      byte[] id = contents.unitId().getBytes(StandardCharsets.UTF_8);
      ByteBuffer header = little(16 + id.length + 12);
      header.putInt(MAGIC).putInt(VERSION).putInt(id.length).put(id);
      header.putLong(contents.capacity()).putInt(contents.fields().size());
      writeFully(channel, header.flip());
      for (FieldCellsData field : contents.fields()) {
        byte[] name = field.field().getBytes(StandardCharsets.UTF_8);
        writeFully(
            channel,
            little(8 + name.length)
                .putInt(name.length)
                .put(name)
                .putInt(field.cells().size())
                .flip());
        for (CellRef cell : field.cells()) {
          writeCell(channel, cell, allocator);
        }
      }
      channel.force(true);
    }
    Files.move(
        temporary, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static void writeCell(FileChannel channel, CellRef cell, BufferAllocator allocator)
      throws IOException {
    CellBlock block = cell.block();
    if (block.kind() == CellBlock.Kind.OBJECT) {
      EncodedValue encoded = ValueEncoder.encode(ObjectCells.plain(block.value(cell.row())));
      long size = encoded.packedSize();
      ByteBuffer meta = little(12 + 8).putLong(cell.gi()).put((byte) 2).put((byte) OBJECT_DTYPE);
      writeFully(channel, meta.put((byte) 0).put((byte) 0).putLong(size).flip());
      try (NativeBuffer packed = allocator.allocate(size)) {
        encoded.packInto(packed.segment());
        writeFully(channel, packed.segment().asByteBuffer());
      }
      return;
    }
    long[] shape = block.rowShape(cell.row());
    ByteBuffer meta = little(12 + 8 * shape.length + 8).putLong(cell.gi());
    meta.put((byte) (block.kind() == CellBlock.Kind.DENSE ? 0 : 1))
        .put((byte) block.dtype().code());
    meta.put((byte) shape.length).put((byte) 0);
    for (long dim : shape) {
      meta.putLong(dim);
    }
    long bytes = block.rowBytes(cell.row());
    writeFully(channel, meta.putLong(bytes).flip());
    writeFully(channel, block.rowSegment(cell.row()).asByteBuffer());
  }

  /**
   * Reads a checkpoint into blocks of {@code allocator}.
   *
   * @return the contents, which the caller owns
   * @throws StorageException with {@code NOT_FOUND} for a missing file, {@code CORRUPT_DATA} for a
   *     malformed one, {@code STORAGE_ERROR} for an I/O failure
   */
  static Contents read(Path file, BufferAllocator allocator) {
    List<FieldCellsData> fields = new ArrayList<>();
    try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
      Reader in = new Reader(channel, file);
      if (in.i32() != MAGIC) {
        throw in.corrupt("not a storage unit checkpoint (bad magic)");
      }
      int version = in.i32();
      if (version != VERSION) {
        throw in.corrupt("unsupported checkpoint version " + version);
      }
      String unitId = in.string();
      long capacity = in.i64();
      int fieldCount = in.count("fieldCount");
      for (int f = 0; f < fieldCount; f++) {
        String field = in.string();
        int cellCount = in.count("cellCount of field '" + field + "'");
        List<CellRef> cells = new ArrayList<>(Math.min(cellCount, 1 << 16));
        fields.add(new FieldCellsData(field, cells));
        for (int c = 0; c < cellCount; c++) {
          cells.add(readCell(in, field, allocator));
        }
      }
      return new Contents(unitId, capacity, fields);
    } catch (NoSuchFileException e) {
      new Contents("", -1, fields).close();
      throw new StorageException(ErrorCode.NOT_FOUND, "checkpoint file not found: " + file, e);
    } catch (IOException e) {
      new Contents("", -1, fields).close();
      throw new StorageException(
          ErrorCode.STORAGE_ERROR, "cannot read checkpoint " + file + ": " + e, e);
    } catch (RuntimeException e) {
      new Contents("", -1, fields).close();
      throw e;
    }
  }

  private static CellRef readCell(Reader in, String field, BufferAllocator allocator)
      throws IOException {
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

  private static ByteBuffer little(int capacity) {
    return ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
  }

  private static void writeFully(FileChannel channel, ByteBuffer buffer) throws IOException {
    while (buffer.hasRemaining()) {
      channel.write(buffer);
    }
  }

  /** Bounds-checked little-endian reads from a file channel. */
  private static final class Reader {
    private final FileChannel channel;
    private final Path file;
    private final ByteBuffer scratch = little(8);

    Reader(FileChannel channel, Path file) {
      this.channel = channel;
      this.file = file;
    }

    private ByteBuffer fill(int n) throws IOException {
      scratch.clear().limit(n);
      while (scratch.hasRemaining()) {
        if (channel.read(scratch) < 0) {
          throw corrupt("truncated at byte " + channel.position());
        }
      }
      return scratch.flip();
    }

    int u8() throws IOException {
      return fill(1).get() & 0xFF;
    }

    int i32() throws IOException {
      return fill(4).getInt();
    }

    long i64() throws IOException {
      return fill(8).getLong();
    }

    int count(String what) throws IOException {
      int n = i32();
      if (n < 0) {
        throw corrupt(what + "=" + n + " < 0");
      }
      return n;
    }

    long length(String what) throws IOException {
      long n = i64();
      long left = channel.size() - channel.position();
      if (n < 0 || n > left) {
        throw corrupt(what + "=" + n + " but " + left + " bytes are left");
      }
      return n;
    }

    String string() throws IOException {
      int n = i32();
      if (n < 0 || n > MAX_NAME_BYTES || n > channel.size() - channel.position()) {
        throw corrupt("string length " + n + " at byte " + (channel.position() - 4));
      }
      ByteBuffer bytes = ByteBuffer.allocate(n);
      while (bytes.hasRemaining()) {
        if (channel.read(bytes) < 0) {
          throw corrupt("truncated string");
        }
      }
      return new String(bytes.array(), StandardCharsets.UTF_8);
    }

    void readInto(MemorySegment target) throws IOException {
      ByteBuffer buffer = target.asByteBuffer();
      while (buffer.hasRemaining()) {
        if (channel.read(buffer) < 0) {
          throw corrupt("truncated cell at byte " + channel.position());
        }
      }
    }

    StorageException corrupt(String what) {
      return new StorageException(ErrorCode.CORRUPT_DATA, "checkpoint " + file + ": " + what);
    }
  }
}
