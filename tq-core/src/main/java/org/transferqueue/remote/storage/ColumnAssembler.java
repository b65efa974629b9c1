package org.transferqueue.remote.storage;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.codec.ValueDecoder;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.storage.simple.RoutingGroup;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;

/**
 * Builds the result column of one field from the rows several units returned, with the rules of the
 * embedded units: all dense with one dtype and row shape gives dense, all tensors of one dtype give
 * jagged, all objects give objects, anything else is {@code SCHEMA_CONFLICT}. Each tensor byte is
 * copied once, from the received reply buffer to its row of the result.
 */
final class ColumnAssembler {
  private ColumnAssembler() {}

  static Column assemble(
      String field,
      int f,
      int rowCount,
      List<RoutingGroup> routes,
      List<UnitRows> replies,
      BufferAllocator allocator) {
    boolean anyObjects = false;
    boolean anyTensors = false;
    DType dtype = null;
    long[] rowShape = null;
    boolean uniformDense = true;
    for (UnitRows reply : replies) {
      UnitRows.FieldRows rows = reply.field(f);
      if (rows.objects()) {
        anyObjects = true;
        continue;
      }
      for (int j = 0; j < rows.rows().size(); j++) {
        anyTensors = true;
        if (dtype == null) {
          dtype = rows.dtypes()[j];
          rowShape = rows.shapes()[j];
        } else if (rows.dtypes()[j] != dtype) {
          throw StorageUnitProtocol.conflict(field, "dtypes " + dtype + " and " + rows.dtypes()[j]);
        }
        uniformDense &=
            rows.kinds()[j] == ColumnKind.DENSE && Arrays.equals(rows.shapes()[j], rowShape);
      }
    }
    if (anyObjects && anyTensors) {
      throw StorageUnitProtocol.conflict(field, "tensor and non-tensor cells");
    }
    if (anyObjects) {
      return objects(field, f, rowCount, routes, replies, allocator);
    }
    if (uniformDense) {
      return dense(f, rowCount, dtype, rowShape, routes, replies, allocator);
    }
    Tensor[] rows = new Tensor[rowCount];
    for (int r = 0; r < replies.size(); r++) {
      UnitRows.FieldRows fieldRows = replies.get(r).field(f);
      int[] positions = routes.get(r).positions();
      for (int j = 0; j < positions.length; j++) {
        rows[positions[j]] =
            Tensor.wrap(fieldRows.dtypes()[j], fieldRows.rows().get(j), fieldRows.shapes()[j]);
      }
    }
    return JaggedColumn.copyOf(allocator, dtype, Arrays.asList(rows));
  }

  private static Column dense(
      int f,
      int rowCount,
      DType dtype,
      long[] rowShape,
      List<RoutingGroup> routes,
      List<UnitRows> replies,
      BufferAllocator allocator) {
    long[] shape = new long[rowShape.length + 1];
    shape[0] = rowCount;
    System.arraycopy(rowShape, 0, shape, 1, rowShape.length);
    Tensor result = Tensor.allocate(allocator, dtype, shape);
    try {
      long rowBytes = rowCount == 0 ? 0 : result.nbytes() / rowCount;
      MemorySegment target = result.segment();
      for (int r = 0; r < replies.size(); r++) {
        List<MemorySegment> rows = replies.get(r).field(f).rows();
        int[] positions = routes.get(r).positions();
        for (int j = 0; j < positions.length; j++) {
          MemorySegment.copy(rows.get(j), 0, target, positions[j] * rowBytes, rowBytes);
        }
      }
      return new DenseColumn(result);
    } catch (RuntimeException e) {
      result.close();
      throw e;
    }
  }

  private static Column objects(
      String field,
      int f,
      int rowCount,
      List<RoutingGroup> routes,
      List<UnitRows> replies,
      BufferAllocator allocator) {
    Object[] values = new Object[rowCount];
    List<Object> decodedLists = new ArrayList<>(replies.size());
    try {
      for (int r = 0; r < replies.size(); r++) {
        List<?> decoded = replies.get(r).field(f).decodeValues(allocator);
        decodedLists.add(decoded);
        int[] positions = routes.get(r).positions();
        if (decoded.size() != positions.length) {
          throw new ProtocolException(
              ErrorCode.PROTOCOL_ERROR,
              "field '"
                  + field
                  + "': unit returned "
                  + decoded.size()
                  + " values for "
                  + positions.length
                  + " rows");
        }
        for (int j = 0; j < positions.length; j++) {
          values[positions[j]] = decoded.get(j);
        }
      }
      return new ObjectColumn(Arrays.asList(values));
    } catch (RuntimeException e) {
      decodedLists.forEach(ValueDecoder::closeTensors);
      throw e;
    }
  }
}
