package org.transferqueue.remote.storage;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.IntToLongFunction;
import java.util.function.ToLongFunction;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.simple.RoutingGroup;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.TransportConfig;

/**
 * Splits the rows a router sends one storage unit into consecutive pieces, one request each, so
 * that no request or reply exceeds the transport's limits: at most {@link
 * TransportConfig#maxBodySegments()} bodies and, for a put, tensor bytes that fit {@link
 * TransportConfig#maxFrameBytes()} beside the largest metadata. A tensor field takes one body per
 * row; an object field takes one body per request (its encoded values) plus one per tensor nested
 * in its values. A batch that an embedded unit takes in one call thus also goes to a remote unit,
 * in several requests that the router holds and decides together. A get cannot see the nested
 * tensors of the stored values before it reads them, so it budgets one per row and object field; a
 * single row larger than the limits, or a get of values holding more nested tensors, still fails
 * with the transport's typed error. Stateless.
 */
final class RoutePieces {
  private static final long BODY_ALIGNMENT = 64;

  /** Room for the frame header, the body table and padding besides metadata and bodies. */
  private static final long FRAME_OVERHEAD = 4096;

  private RoutePieces() {}

  /** The pieces of a put of {@code batch}'s rows at {@code route}'s positions. */
  static List<RoutingGroup> ofPut(RoutingGroup route, Batch batch, TransportConfig limits) {
    List<Column> tensors = new ArrayList<>();
    List<ObjectColumn> objects = new ArrayList<>();
    for (String field : batch.fields()) {
      Column column = batch.column(field);
      switch (column) {
        case ObjectColumn values -> objects.add(values);
        default -> tensors.add(column);
      }
    }
    long maxBytes = maxBodyBytes(limits);
    return split(
        route,
        objects.size(),
        p -> tensors.size() + nestedTensors(objects, p),
        limits.maxBodySegments(),
        p -> rowBytes(tensors, objects, p),
        maxBytes);
  }

  /**
   * The pieces of a get of {@code fields}: one reply body per row and field, and one per request
   * and field for an object field's encoded values; reply bytes budgeted from the tensor shapes the
   * metadata gives (a field without them, an object field or a placeholder, counts 0 bytes: such a
   * reply larger than a frame still fails with the transport's typed error).
   */
  static List<RoutingGroup> ofGet(
      RoutingGroup route, BatchMeta meta, List<String> fields, TransportConfig limits) {
    List<FieldSchema> tensors = new ArrayList<>();
    for (String field : fields) {
      FieldSchema schema = meta.fieldSchema().get(field);
      if (schema != null && schema.dtype() != null) {
        tensors.add(schema);
      }
    }
    return split(
        route,
        fields.size(),
        p -> fields.size(),
        limits.maxBodySegments(),
        p -> expectedRowBytes(tensors, p),
        maxBodyBytes(limits));
  }

  private static long maxBodyBytes(TransportConfig limits) {
    return Math.max(
        limits.maxFrameBytes() / 2,
        limits.maxFrameBytes() - limits.maxMetadataBytes() - FRAME_OVERHEAD);
  }

  /** The padded bytes the reply carries for row {@code p}, from the metadata's shapes. */
  private static long expectedRowBytes(List<FieldSchema> tensors, int p) {
    long total = 0;
    for (FieldSchema schema : tensors) {
      List<Long> shape = schema.shapeAt(p);
      if (shape != null) {
        long elements = 1;
        for (long d : shape) {
          elements = Math.multiplyExact(elements, d);
        }
        total += padded(Math.multiplyExact(elements, schema.dtype().byteSize()));
      }
    }
    return total;
  }

  private static List<RoutingGroup> split(
      RoutingGroup route,
      int bodiesPerPiece,
      IntToLongFunction bodiesOfRow,
      int maxBodies,
      IntToLongFunction bytesOfRow,
      long maxBytes) {
    int n = route.globalIndexes().length;
    List<RoutingGroup> pieces = new ArrayList<>();
    int from = 0;
    long bodies = bodiesPerPiece;
    long bytes = 0;
    for (int i = 0; i < n; i++) {
      int position = route.positions()[i];
      long rowBodies = bodiesOfRow.applyAsLong(position);
      long row = bytesOfRow.applyAsLong(position);
      if (i > from && (bodies + rowBodies > maxBodies || bytes + row > maxBytes)) {
        pieces.add(piece(route, from, i));
        from = i;
        bodies = bodiesPerPiece;
        bytes = 0;
      }
      bodies += rowBodies;
      bytes += row;
    }
    if (from == 0) {
      return List.of(route);
    }
    pieces.add(piece(route, from, n));
    return pieces;
  }

  private static RoutingGroup piece(RoutingGroup route, int from, int to) {
    return new RoutingGroup(
        route.unit(),
        Arrays.copyOfRange(route.globalIndexes(), from, to),
        Arrays.copyOfRange(route.positions(), from, to));
  }

  /** The padded bytes of the bodies of row {@code p}: its tensor cells and nested tensors. */
  private static long rowBytes(List<Column> tensors, List<ObjectColumn> objects, int p) {
    long total = 0;
    for (Column column : tensors) {
      long bytes =
          switch (column) {
            case DenseColumn dense -> {
              long rows = dense.tensor().shape(0);
              yield rows == 0 ? 0 : dense.tensor().nbytes() / rows;
            }
            case JaggedColumn jagged ->
                (jagged.offsets()[p + 1] - jagged.offsets()[p]) * jagged.dtype().byteSize();
            default -> 0;
          };
      total += padded(bytes);
    }
    for (ObjectColumn column : objects) {
      total += nestedBytes(column.get(p));
    }
    return total;
  }

  private static long padded(long bytes) {
    return (bytes + BODY_ALIGNMENT - 1) / BODY_ALIGNMENT * BODY_ALIGNMENT;
  }

  /** The tensors nested in row {@code p} of the object columns: one aux body each. */
  private static long nestedTensors(List<ObjectColumn> objects, int p) {
    long count = 0;
    for (ObjectColumn column : objects) {
      count += nestedTensors(column.get(p));
    }
    return count;
  }

  private static long nestedTensors(Object value) {
    return sumOverTensors(value, t -> 1);
  }

  private static long nestedBytes(Object value) {
    return sumOverTensors(value, t -> padded(t.nbytes()));
  }

  /** The sum of {@code figure} over the tensors nested in a value's lists and maps. */
  private static long sumOverTensors(Object value, ToLongFunction<Tensor> figure) {
    return switch (value) {
      case Tensor t -> figure.applyAsLong(t);
      case Collection<?> list -> {
        long n = 0;
        for (Object element : list) {
          n += sumOverTensors(element, figure);
        }
        yield n;
      }
      case Map<?, ?> map -> {
        long n = 0;
        for (Object element : map.values()) {
          n += sumOverTensors(element, figure);
        }
        yield n;
      }
      case null, default -> 0;
    };
  }
}
