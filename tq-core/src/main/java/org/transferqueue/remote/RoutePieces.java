package org.transferqueue.remote;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.transferqueue.remote.RemoteSimpleStorageManager.Route;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.transport.TransportConfig;

/**
 * Splits the rows a router sends one storage unit into consecutive pieces, one request each, so
 * that no request or reply exceeds the transport's limits: at most {@link
 * TransportConfig#maxBodySegments()} bodies (one per tensor row and field) and, for a put, tensor
 * bytes that fit {@link TransportConfig#maxFrameBytes()} beside the largest metadata. A batch that
 * an embedded unit takes in one call thus also goes to a remote unit, in several requests that the
 * router holds and decides together. Object values travel in the metadata and count as no body; a
 * single row larger than the limits still fails with the transport's typed error. Stateless.
 */
final class RoutePieces {
  private static final long BODY_ALIGNMENT = 64;

  /** Room for the frame header, the body table and padding besides metadata and bodies. */
  private static final long FRAME_OVERHEAD = 4096;

  private RoutePieces() {}

  /** The pieces of a put of {@code batch}'s rows at {@code route}'s positions. */
  static List<Route> ofPut(Route route, Batch batch, TransportConfig limits) {
    List<Column> tensors = new ArrayList<>();
    for (String field : batch.fields()) {
      Column column = batch.column(field);
      if (column instanceof DenseColumn || column instanceof JaggedColumn) {
        tensors.add(column);
      }
    }
    long maxBytes =
        Math.max(
            limits.maxFrameBytes() / 2,
            limits.maxFrameBytes() - limits.maxMetadataBytes() - FRAME_OVERHEAD);
    return split(
        route, tensors.size(), limits.maxBodySegments(), p -> rowBytes(tensors, p), maxBytes);
  }

  /** The pieces of a get of {@code fieldCount} fields: at most one reply body per row and field. */
  static List<Route> ofGet(Route route, int fieldCount, TransportConfig limits) {
    return split(route, fieldCount, limits.maxBodySegments(), p -> 0, Long.MAX_VALUE);
  }

  private static List<Route> split(
      Route route,
      int bodiesPerRow,
      int maxBodies,
      java.util.function.IntToLongFunction bytesOfRow,
      long maxBytes) {
    int rowsPerPiece = Math.max(1, maxBodies / Math.max(1, bodiesPerRow));
    int n = route.gis().length;
    List<Route> pieces = new ArrayList<>();
    int from = 0;
    long bytes = 0;
    for (int i = 0; i < n; i++) {
      long row = bytesOfRow.applyAsLong(route.positions()[i]);
      if (i > from && (i - from == rowsPerPiece || bytes + row > maxBytes)) {
        pieces.add(piece(route, from, i));
        from = i;
        bytes = 0;
      }
      bytes += row;
    }
    if (from == 0) {
      return List.of(route);
    }
    pieces.add(piece(route, from, n));
    return pieces;
  }

  private static Route piece(Route route, int from, int to) {
    return new Route(
        route.unit(),
        Arrays.copyOfRange(route.gis(), from, to),
        Arrays.copyOfRange(route.positions(), from, to));
  }

  /** The padded bytes of the bodies of row {@code p} of the tensor columns. */
  private static long rowBytes(List<Column> tensors, int p) {
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
      total += (bytes + BODY_ALIGNMENT - 1) / BODY_ALIGNMENT * BODY_ALIGNMENT;
    }
    return total;
  }
}
