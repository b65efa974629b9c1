package org.transferqueue.storage.simple;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The checkpoint file of one storage unit: writes a unit's cells and reads them back as columns.
 *
 * <pre>
 *  offset 0   "TQSU"                      4 bytes magic
 *         4   version                     u32 little-endian (1)
 *         8   data                        the groups' bytes back to back
 *         F   footer                      msgpack map (see below)
 *  size-12    footer length               u64 little-endian
 *  size-4     "TQSU"                      4 bytes magic
 * </pre>
 *
 * The footer is {@code {unit_id, capacity: int|nil, groups: [group]}}. A group holds the cells of
 * one field that were stored with the same kind (and, for dense cells, the same dtype and row
 * shape), so a reload keeps column kinds exactly as they were put:
 *
 * <pre>
 *  dense   { field, kind: "dense",  dtype, gis: [int], row_shape: [int],   offset, length }
 *          raw row-major bytes of a [len(gis), row_shape...] tensor
 *  jagged  { field, kind: "jagged", dtype, gis: [int], row_shapes: [[int]], offset, length }
 *          raw bytes of the rows back to back
 *  object  { field, kind: "object", gis: [int], offset, length, aux: [[offset, length]] }
 *          a msgpack array of the row values (wire value encoding) and one aux frame per tensor
 * </pre>
 *
 * Tensor bytes go from the unit's cells to the file and from the file into off-heap memory without
 * passing through the heap. Stateless; thread-safe.
 */
final class UnitCheckpointFile {
  static final int VERSION = 1;
  private static final byte[] MAGIC = "TQSU".getBytes(StandardCharsets.US_ASCII);
  private static final long HEADER_BYTES = 8;
  private static final long TRAILER_BYTES = 12;
  private static final long MAX_FOOTER_BYTES = 1L << 30;
  private static final int CHUNK = 1 << 30;

  private UnitCheckpointFile() {}

  /** The cells of one group read back: the field, its samples and a column the caller owns. */
  record Group(String field, long[] gis, Column column) implements AutoCloseable {
    @Override
    public void close() {
      column.close();
    }
  }

  /** A unit file read back. */
  record Contents(String unitId, Long capacity, List<Group> groups) implements AutoCloseable {
    @Override
    public void close() {
      groups.forEach(Group::close);
    }
  }

  // ---- writing -----------------------------------------------------------------------------

  /**
   * Writes every cell of {@code unit} to {@code file} (created; must not exist).
   *
   * @param unit the unit
   * @param file the target file
   * @param scratch where staging copies of cells are allocated (freed before returning)
   * @throws StorageException with {@code STORAGE_ERROR} naming the file on an I/O error
   */
  static void write(StorageUnit unit, Path file, BufferAllocator scratch) {
    try (FileChannel out =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ByteBuffer header = ByteBuffer.allocate((int) HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      header.put(MAGIC).putInt(VERSION).flip();
      writeFully(out, header);
      List<Object> groups = new ArrayList<>();
      for (Map.Entry<String, long[]> field : unit.heldCells().entrySet()) {
        writeField(unit, field.getKey(), field.getValue(), out, scratch, groups);
      }
      Map<String, Object> footer = new LinkedHashMap<>();
      footer.put("unit_id", unit.id());
      footer.put(
          "capacity",
          unit.capacitySamples().isPresent() ? unit.capacitySamples().getAsLong() : null);
      footer.put("groups", groups);
      byte[] encoded = ValueEncoder.encode(footer).mainFrame();
      writeFully(out, ByteBuffer.wrap(encoded));
      ByteBuffer trailer = ByteBuffer.allocate((int) TRAILER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      trailer.putLong(encoded.length).put(MAGIC).flip();
      writeFully(out, trailer);
      out.force(true);
    } catch (IOException e) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR,
          "Storage unit " + unit.id() + " failed to save checkpoint to " + file + ": " + e,
          e);
    }
  }

  private static void writeField(
      StorageUnit unit,
      String field,
      long[] gis,
      FileChannel out,
      BufferAllocator scratch,
      List<Object> groups)
      throws IOException {
    if (gis.length == 0) {
      return;
    }
    try (CellSnapshot snapshot = unit.snapshot(gis, List.of(field))) {
      Map<String, List<Integer>> byKey = new LinkedHashMap<>();
      for (int j = 0; j < gis.length; j++) {
        CellBlock block = snapshot.block(0, j);
        String key =
            switch (block.kind()) {
              case DENSE ->
                  "dense/"
                      + block.dtype().torchName()
                      + Arrays.toString(block.rowShape(snapshot.blockRow(0, j)));
              case JAGGED -> "jagged/" + block.dtype().torchName();
              case OBJECT -> "object";
            };
        byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(j);
      }
      for (List<Integer> rows : byKey.values()) {
        groups.add(writeGroup(field, gis, rows, snapshot, out, scratch));
      }
    }
  }

  private static Map<String, Object> writeGroup(
      String field,
      long[] gis,
      List<Integer> rows,
      CellSnapshot snapshot,
      FileChannel out,
      BufferAllocator scratch)
      throws IOException {
    CellBlock first = snapshot.block(0, rows.getFirst());
    Map<String, Object> group = new LinkedHashMap<>();
    group.put("field", field);
    List<Long> groupGis = new ArrayList<>(rows.size());
    for (int j : rows) {
      groupGis.add(gis[j]);
    }
    long offset = out.position();
    if (first.kind() == CellBlock.Kind.OBJECT) {
      List<Object> values = new ArrayList<>(rows.size());
      List<Tensor> owned = new ArrayList<>();
      try {
        for (int j : rows) {
          values.add(
              ObjectCells.thaw(
                  snapshot.block(0, j).value(snapshot.blockRow(0, j)), scratch, owned));
        }
        EncodedValue encoded = ValueEncoder.encodeColumn(values);
        writeFully(out, ByteBuffer.wrap(encoded.mainFrame()));
        List<Object> aux = new ArrayList<>();
        for (Tensor tensor : encoded.auxTensors()) {
          aux.add(List.of(out.position(), tensor.nbytes()));
          writeSegment(out, tensor.segment().asSlice(0, tensor.nbytes()));
        }
        group.put("kind", "object");
        group.put("gis", groupGis);
        group.put("offset", offset);
        group.put("length", (long) encoded.mainFrame().length);
        group.put("aux", aux);
      } finally {
        owned.forEach(Tensor::close);
      }
      return group;
    }
    long total = 0;
    for (int j : rows) {
      total += snapshot.block(0, j).rowBytes(snapshot.blockRow(0, j));
    }
    try (NativeBuffer staging = scratch.allocate(Math.max(1, total))) {
      long at = 0;
      for (int j : rows) {
        CellBlock block = snapshot.block(0, j);
        int row = snapshot.blockRow(0, j);
        block.copyRowTo(row, staging.segment(), at);
        at += block.rowBytes(row);
      }
      writeSegment(out, staging.segment().asSlice(0, total));
    }
    group.put("kind", first.kind() == CellBlock.Kind.DENSE ? "dense" : "jagged");
    group.put("dtype", first.dtype().torchName());
    group.put("gis", groupGis);
    if (first.kind() == CellBlock.Kind.DENSE) {
      group.put("row_shape", boxed(first.rowShape(snapshot.blockRow(0, rows.getFirst()))));
    } else {
      List<Object> shapes = new ArrayList<>();
      for (int j : rows) {
        shapes.add(boxed(snapshot.block(0, j).rowShape(snapshot.blockRow(0, j))));
      }
      group.put("row_shapes", shapes);
    }
    group.put("offset", offset);
    group.put("length", total);
    return group;
  }

  private static List<Long> boxed(long[] values) {
    return Arrays.stream(values).boxed().toList();
  }

  private static void writeSegment(FileChannel out, MemorySegment segment) throws IOException {
    for (long at = 0; at < segment.byteSize(); at += CHUNK) {
      long n = Math.min(CHUNK, segment.byteSize() - at);
      writeFully(out, segment.asSlice(at, n).asByteBuffer());
    }
  }

  private static void writeFully(FileChannel out, ByteBuffer buffer) throws IOException {
    while (buffer.hasRemaining()) {
      out.write(buffer);
    }
  }

  // ---- reading -----------------------------------------------------------------------------

  /**
   * Reads and validates a unit file.
   *
   * @param file the file
   * @param allocator where the columns' memory comes from
   * @return the contents; the caller owns and must close them; on failure nothing stays allocated
   * @throws StorageException with {@code CORRUPT_DATA} naming the file and the problem, {@code
   *     INVALID_ARGUMENT} for another version, {@code STORAGE_ERROR} on an I/O error
   */
  static Contents read(Path file, BufferAllocator allocator) {
    List<Group> groups = new ArrayList<>();
    try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = in.size();
      if (size < HEADER_BYTES + TRAILER_BYTES) {
        throw corrupt(file, "file is " + size + " bytes, shorter than header and trailer");
      }
      ByteBuffer header = readHeap(in, 0, (int) HEADER_BYTES);
      checkMagic(file, header, "header");
      int version = header.getInt(4);
      if (version != VERSION) {
        throw new StorageException(
            ErrorCode.INVALID_ARGUMENT,
            file
                + ": storage unit file version "
                + version
                + " is not supported ("
                + VERSION
                + ")");
      }
      ByteBuffer trailer = readHeap(in, size - TRAILER_BYTES, (int) TRAILER_BYTES);
      long footerLength = trailer.getLong(0);
      ByteBuffer magic = trailer.slice(8, 4);
      checkMagic(file, magic, "trailer");
      long footerStart = size - TRAILER_BYTES - footerLength;
      if (footerLength < 1 || footerLength > MAX_FOOTER_BYTES || footerStart < HEADER_BYTES) {
        throw corrupt(
            file, "footer length " + footerLength + " does not fit a " + size + " byte file");
      }
      byte[] footerBytes = new byte[(int) footerLength];
      readHeap(in, footerStart, (int) footerLength).get(footerBytes);
      Object footer =
          ValueDecoder.decode(MemorySegment.ofArray(footerBytes), List.of(), file.toString());
      Map<?, ?> root = map(file, footer, "footer");
      String unitId = string(file, root.get("unit_id"), "unit_id");
      Object cap = root.get("capacity");
      Long capacity = cap == null ? null : integer(file, cap, "capacity");
      for (Object g : list(file, root.get("groups"), "groups")) {
        groups.add(readGroup(file, in, map(file, g, "group"), footerStart, allocator));
      }
      return new Contents(unitId, capacity, List.copyOf(groups));
    } catch (IOException e) {
      groups.forEach(Group::close);
      throw new StorageException(
          ErrorCode.STORAGE_ERROR, "cannot read storage unit checkpoint " + file + ": " + e, e);
    } catch (TqException e) {
      groups.forEach(Group::close);
      if (e.code() == ErrorCode.OUT_OF_MEMORY
          || e.code() == ErrorCode.INVALID_ARGUMENT
          || e.code() == ErrorCode.CORRUPT_DATA) {
        throw e;
      }
      throw new StorageException(ErrorCode.CORRUPT_DATA, file + ": " + e.getMessage(), e);
    } catch (RuntimeException e) {
      groups.forEach(Group::close);
      throw new StorageException(ErrorCode.CORRUPT_DATA, file + ": malformed content: " + e, e);
    }
  }

  private static Group readGroup(
      Path file, FileChannel in, Map<?, ?> g, long dataEnd, BufferAllocator allocator)
      throws IOException {
    String field = string(file, g.get("field"), "group.field");
    String kind = string(file, g.get("kind"), "group.kind");
    long[] gis = longs(file, g.get("gis"), "group.gis");
    long offset = integer(file, g.get("offset"), "group.offset");
    long length = integer(file, g.get("length"), "group.length");
    checkRange(file, offset, length, dataEnd, field);
    switch (kind) {
      case "dense" -> {
        DType dtype = dtype(file, g.get("dtype"));
        long[] rowShape = longs(file, g.get("row_shape"), "group.row_shape");
        long[] shape = new long[rowShape.length + 1];
        shape[0] = gis.length;
        System.arraycopy(rowShape, 0, shape, 1, rowShape.length);
        Tensor tensor = Tensor.allocate(allocator, dtype, shape);
        try {
          requireLength(file, field, tensor.nbytes(), length);
          readInto(in, offset, tensor.segment().asSlice(0, length));
          return new Group(field, gis, new DenseColumn(tensor));
        } catch (IOException | RuntimeException e) {
          tensor.close();
          throw e;
        }
      }
      case "jagged" -> {
        DType dtype = dtype(file, g.get("dtype"));
        List<long[]> shapes = new ArrayList<>();
        long elements = 0;
        for (Object s : list(file, g.get("row_shapes"), "group.row_shapes")) {
          long[] shape = longs(file, s, "group.row_shapes[]");
          long n = 1;
          for (long d : shape) {
            if (d < 0) {
              throw corrupt(file, "negative dimension in field '" + field + "'");
            }
            n = Math.multiplyExact(n, d);
          }
          elements = Math.addExact(elements, n);
          shapes.add(shape);
        }
        if (shapes.size() != gis.length) {
          throw corrupt(
              file,
              "field '"
                  + field
                  + "' has "
                  + shapes.size()
                  + " shapes for "
                  + gis.length
                  + " samples");
        }
        Tensor values = Tensor.allocate(allocator, dtype, elements);
        try {
          requireLength(file, field, values.nbytes(), length);
          readInto(in, offset, values.segment().asSlice(0, length));
          return new Group(field, gis, JaggedColumn.fromValues(values, shapes));
        } catch (IOException | RuntimeException e) {
          values.close();
          throw e;
        }
      }
      case "object" -> {
        if (length > MAX_FOOTER_BYTES) {
          throw corrupt(file, "object frame of field '" + field + "' is " + length + " bytes");
        }
        byte[] main = new byte[(int) length];
        readHeap(in, offset, (int) length).get(main);
        List<NativeBuffer> aux = new ArrayList<>();
        try {
          List<MemorySegment> frames = new ArrayList<>();
          for (Object a : list(file, g.get("aux"), "group.aux")) {
            long[] range = longs(file, a, "group.aux[]");
            if (range.length != 2) {
              throw corrupt(file, "aux frame of field '" + field + "' is not [offset, length]");
            }
            checkRange(file, range[0], range[1], dataEnd, field);
            NativeBuffer buffer = allocator.allocate(Math.max(1, range[1]));
            aux.add(buffer);
            MemorySegment target = buffer.segment().asSlice(0, range[1]);
            readInto(in, range[0], target);
            frames.add(target);
          }
          ObjectColumn column =
              ValueDecoder.decodeObjectColumn(
                  MemorySegment.ofArray(main), frames, file + " field '" + field + "'", allocator);
          if (column.rowCount() != gis.length) {
            column.close();
            throw corrupt(
                file,
                "field '"
                    + field
                    + "' has "
                    + column.rowCount()
                    + " values for "
                    + gis.length
                    + " samples");
          }
          return new Group(field, gis, column);
        } finally {
          aux.forEach(NativeBuffer::close);
        }
      }
      default -> throw corrupt(file, "unknown group kind '" + kind + "' of field '" + field + "'");
    }
  }

  private static void requireLength(Path file, String field, long expected, long length) {
    if (expected != length) {
      throw corrupt(
          file, "field '" + field + "' needs " + expected + " bytes, the file records " + length);
    }
  }

  private static void checkRange(Path file, long offset, long length, long dataEnd, String field) {
    if (offset < HEADER_BYTES || length < 0 || offset > dataEnd - length) {
      throw corrupt(
          file,
          "field '"
              + field
              + "' bytes ["
              + offset
              + ", +"
              + length
              + ") lie outside the data section");
    }
  }

  private static void readInto(FileChannel in, long position, MemorySegment target)
      throws IOException {
    for (long at = 0; at < target.byteSize(); at += CHUNK) {
      long n = Math.min(CHUNK, target.byteSize() - at);
      ByteBuffer buffer = target.asSlice(at, n).asByteBuffer();
      long pos = position + at;
      while (buffer.hasRemaining()) {
        int read = in.read(buffer, pos);
        if (read < 0) {
          throw new IOException("unexpected end of file at byte " + pos);
        }
        pos += read;
      }
    }
  }

  private static ByteBuffer readHeap(FileChannel in, long position, int length) throws IOException {
    ByteBuffer buffer = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    readInto(in, position, MemorySegment.ofBuffer(buffer));
    return buffer.clear();
  }

  private static void checkMagic(Path file, ByteBuffer buffer, String where) {
    for (int i = 0; i < MAGIC.length; i++) {
      if (buffer.get(i) != MAGIC[i]) {
        throw corrupt(file, "bad magic in the " + where + " (not a storage unit checkpoint)");
      }
    }
  }

  private static DType dtype(Path file, Object name) {
    try {
      return DType.fromName(string(file, name, "group.dtype"));
    } catch (TqException e) {
      throw corrupt(file, "unknown dtype " + name);
    }
  }

  private static Map<?, ?> map(Path file, Object o, String what) {
    if (o instanceof Map<?, ?> m) {
      return m;
    }
    throw corrupt(file, what + " is not a map: " + o);
  }

  private static List<?> list(Path file, Object o, String what) {
    if (o instanceof List<?> l) {
      return l;
    }
    throw corrupt(file, what + " is not a list: " + o);
  }

  private static String string(Path file, Object o, String what) {
    if (o instanceof String s) {
      return s;
    }
    throw corrupt(file, what + " is not a string: " + o);
  }

  private static long integer(Path file, Object o, String what) {
    if (o instanceof Long l) {
      return l;
    }
    throw corrupt(file, what + " is not an integer: " + o);
  }

  private static long[] longs(Path file, Object o, String what) {
    List<?> items = list(file, o, what);
    long[] out = new long[items.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = integer(file, items.get(i), what);
    }
    return out;
  }

  private static StorageException corrupt(Path file, String problem) {
    return new StorageException(
        ErrorCode.CORRUPT_DATA,
        Objects.toString(file) + ": corrupt storage unit checkpoint: " + problem);
  }
}
