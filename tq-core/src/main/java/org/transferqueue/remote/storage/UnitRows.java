package org.transferqueue.remote.storage;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.remote.Wire;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.transport.Response;

/**
 * The reply of one storage unit to a get: for each requested field either the rows' tensors (kind,
 * dtype, shape and bytes, read straight from the socket into the reply's buffers) or the encoded
 * object values.
 *
 * <p>Owns the reply's buffers until {@link #close()}; segments returned are valid until then. Not
 * thread-safe.
 */
public final class UnitRows implements AutoCloseable {
  private final Response response;
  private final List<FieldRows> fields;

  private UnitRows(Response response, List<FieldRows> fields) {
    this.response = response;
    this.fields = fields;
  }

  /** Parses a GET reply; closes the response if it is malformed. */
  static UnitRows parse(Response response, List<String> names, int rowCount, HostPort from) {
    try (Wire.Reader in = new Wire.Reader(response.metadata(), "GET reply from " + from)) {
      if (in.array() != names.size()) {
        throw in.malformed("field count differs from the request's " + names.size());
      }
      List<FieldRows> fields = new ArrayList<>(names.size());
      int body = 0;
      for (String name : names) {
        int parts = in.array();
        boolean objects = in.bool();
        if (objects) {
          if (parts != 3) {
            throw in.malformed("object field '" + name + "' is not [true, mainBytes, auxCount]");
          }
          long mainBytes = in.i64();
          int auxCount = in.i32();
          if (auxCount < 0) {
            throw in.malformed("object field '" + name + "' has auxCount=" + auxCount);
          }
          List<MemorySegment> frames = slice(response, in, body, 1 + auxCount);
          body += frames.size();
          if (frames.getFirst().byteSize() != mainBytes) {
            throw in.malformed(
                "object field '"
                    + name
                    + "' main frame is "
                    + frames.getFirst().byteSize()
                    + " bytes, not "
                    + mainBytes);
          }
          fields.add(FieldRows.objects(name, frames.getFirst(), frames.subList(1, frames.size())));
        } else {
          int rows = in.array(StorageUnitProtocol.MAX_ROWS);
          if (parts != 2 || rows != rowCount) {
            throw in.malformed("tensor field '" + name + "' has rows=" + rows);
          }
          ColumnKind[] kinds = new ColumnKind[rows];
          DType[] dtypes = new DType[rows];
          long[][] shapes = new long[rows][];
          for (int j = 0; j < rows; j++) {
            in.array();
            int kind = in.i32();
            if (kind < 0 || kind >= ColumnKind.values().length) {
              throw in.malformed("field '" + name + "' row " + j + " has kind=" + kind);
            }
            kinds[j] = ColumnKind.values()[kind];
            dtypes[j] = DType.fromName(in.str());
            shapes[j] = in.longs(StorageUnitProtocol.MAX_RANK);
          }
          List<MemorySegment> bodies = slice(response, in, body, rows);
          for (int j = 0; j < rows; j++) {
            checkRowBytes(in, name, j, dtypes[j], shapes[j], bodies.get(j).byteSize());
          }
          fields.add(new FieldRows(name, false, null, List.of(), kinds, dtypes, shapes, bodies));
          body += rows;
        }
      }
      if (body != response.bodyCount()) {
        throw in.malformed("bodies=" + response.bodyCount() + " but the fields name " + body);
      }
      return new UnitRows(response, fields);
    } catch (RuntimeException e) {
      response.close();
      throw e;
    }
  }

  /**
   * Checks that a tensor row's body holds exactly the bytes its dtype and shape say: whoever reads
   * the rows (the column assembly, a caller of {@link FieldRows#rows()}) copies that many bytes.
   */
  private static void checkRowBytes(
      Wire.Reader in, String name, int row, DType dtype, long[] shape, long bodyBytes) {
    long nbytes = dtype.byteSize();
    try {
      for (long d : shape) {
        if (d < 0) {
          throw new ArithmeticException("negative dimension " + d);
        }
        nbytes = Math.multiplyExact(nbytes, d);
      }
    } catch (ArithmeticException e) {
      throw in.malformed(rowName(name, row, shape, dtype) + " has no byte size: " + e.getMessage());
    }
    if (nbytes != bodyBytes) {
      throw in.malformed(
          rowName(name, row, shape, dtype)
              + " needs "
              + nbytes
              + " bytes but its body is "
              + bodyBytes
              + " bytes");
    }
  }

  private static List<MemorySegment> slice(Response response, Wire.Reader in, int from, int n) {
    if (n < 0 || (long) from + n > response.bodyCount()) {
      throw in.malformed(
          "bodies " + from + ".." + ((long) from + n) + " of " + response.bodyCount());
    }
    return response.bodies().subList(from, from + n);
  }

  /**
   * The rows of field {@code f} (request order).
   *
   * @param f the field's position in the request
   * @return the rows, valid until {@link #close()}
   */
  FieldRows field(int f) {
    return fields.get(f);
  }

  /** Releases the reply's buffers. Idempotent. */
  @Override
  public void close() {
    response.close();
  }

  /**
   * One field's rows from one unit.
   *
   * @param name the field
   * @param objects whether every row is an object value
   * @param mainFrame the encoded values (objects only), a view of a reply body
   * @param aux the aux frames of the encoded values (objects only)
   * @param kinds each tensor row's kind
   * @param dtypes each tensor row's dtype
   * @param shapes each tensor row's shape
   * @param rows each tensor row's bytes
   */
  record FieldRows(
      String name,
      boolean objects,
      MemorySegment mainFrame,
      List<MemorySegment> aux,
      ColumnKind[] kinds,
      DType[] dtypes,
      long[][] shapes,
      List<MemorySegment> rows) {

    static FieldRows objects(String name, MemorySegment mainFrame, List<MemorySegment> aux) {
      return new FieldRows(name, true, mainFrame, aux, null, null, null, List.of());
    }

    /**
     * Decodes the object values; their tensors are copies from {@code allocator} the caller owns.
     */
    List<?> decodeValues(BufferAllocator allocator) {
      Object decoded =
          ValueDecoder.decodeCopying(mainFrame, aux, "field '" + name + "'", allocator);
      if (!(decoded instanceof List<?> list)) {
        ValueDecoder.closeTensors(decoded);
        throw new org.transferqueue.ProtocolException(
            org.transferqueue.ErrorCode.PROTOCOL_ERROR,
            "field '" + name + "': object values are not a list");
      }
      return list;
    }
  }

  /** How an error names a row: field, row, shape and dtype. */
  private static String rowName(String name, int row, long[] shape, DType dtype) {
    return "field '" + name + "' row " + row + " shape=" + Arrays.toString(shape) + " of " + dtype;
  }
}
