package org.transferqueue.remote.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.remote.Wire;
import org.transferqueue.storage.simple.RoutingGroup;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.ColumnKind;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.transport.InProcessExchange;
import org.transferqueue.transport.Response;

/**
 * {@link UnitRows#parse} on GET replies whose tensor rows disagree with their bodies: a hostile or
 * corrupted reply (a lying body table moves bytes between bodies, a mutated shape) must fail typed
 * and release the reply, never reach the column assembly, which copies {@code shape} bytes per row.
 */
@ExtendWith(LeakCheckExtension.class)
class UnitRowsTest {
  private static final HostPort FROM = new HostPort("127.0.0.1", 1);
  private static final List<String> FIELDS = List.of("x");

  /** A GET reply of one dense float32 field: one row per shape, one body per row. */
  private static Response reply(BufferAllocator allocator, long[][] shapes, long[] bodyBytes) {
    Wire.Writer out = new Wire.Writer().array(1).array(2).bool(false).array(shapes.length);
    for (long[] shape : shapes) {
      out.array(3).i64(ColumnKind.DENSE.ordinal()).str(DType.FLOAT32.torchName()).longs(shape);
    }
    List<NativeBuffer> buffers = new ArrayList<>();
    for (long length : bodyBytes) {
      NativeBuffer buffer = allocator.allocate(length);
      buffer.segment().fill((byte) 1);
      buffers.add(buffer);
    }
    return InProcessExchange.response(out.toBytes(), buffers);
  }

  @Test
  void shouldRejectTensorRowWhoseBodyIsShorterThanItsShapeAndReleaseTheReply(
      BufferAllocator allocator) {
    // Same total as two float32[3] rows, split 8 + 16: the first row would be copied past its body.
    Response lying = reply(allocator, new long[][] {{3}, {3}}, new long[] {8, 16});

    assertThatThrownBy(() -> UnitRows.parse(lying, FIELDS, 2, FROM))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("row 0")
        .hasMessageContaining("body is 8 bytes")
        .extracting(e -> ((ProtocolException) e).code())
        .isEqualTo(ErrorCode.PROTOCOL_ERROR);
    assertThat(allocator.outstandingBuffers()).as("reply buffers released").isZero();
  }

  @Test
  void shouldRejectTensorRowWhoseShapeWasEnlargedAndReleaseTheReply(BufferAllocator allocator) {
    Response lying = reply(allocator, new long[][] {{40}}, new long[] {12});

    assertThatThrownBy(() -> UnitRows.parse(lying, FIELDS, 1, FROM))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("shape=[40]")
        .hasMessageContaining("body is 12 bytes");
    assertThat(allocator.outstandingBuffers()).as("reply buffers released").isZero();
  }

  @Test
  void shouldRejectTensorRowWhoseShapeOverflowsAndReleaseTheReply(BufferAllocator allocator) {
    Response lying = reply(allocator, new long[][] {{Long.MAX_VALUE / 2, 3}}, new long[] {12});

    assertThatThrownBy(() -> UnitRows.parse(lying, FIELDS, 1, FROM))
        .isInstanceOf(ProtocolException.class)
        .hasMessageContaining("row 0")
        .hasMessageContaining("has no byte size");
    assertThat(allocator.outstandingBuffers()).as("reply buffers released").isZero();
  }

  @Test
  void shouldAssembleRowsWhoseBodiesMatchTheirShapes(BufferAllocator allocator) {
    Response honest = reply(allocator, new long[][] {{3}, {3}}, new long[] {12, 12});
    try (UnitRows rows = UnitRows.parse(honest, FIELDS, 2, FROM);
        Column column =
            ColumnAssembler.assemble(
                "x",
                0,
                2,
                List.of(new RoutingGroup(0, new long[] {7, 8}, new int[] {1, 0})),
                List.of(rows),
                allocator)) {
      assertThat(column).isInstanceOf(DenseColumn.class);
      assertThat(((DenseColumn) column).tensor().shape()).containsExactly(2, 3);
      assertThat(((DenseColumn) column).tensor().segment().byteSize()).isEqualTo(24);
    }
  }
}
