package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class IoWindowTest {

  private static ByteBuffer[] buffers(int count, int bytes) {
    ByteBuffer[] buffers = new ByteBuffer[count];
    Arrays.setAll(buffers, i -> ByteBuffer.allocate(bytes));
    return buffers;
  }

  @Test
  void shouldCoverTheWindowWhenBodiesAreSmall() {
    ByteBuffer[] buffers = buffers(1000, 32 * 1024);
    int window = (int) (IoWindow.WINDOW_BYTES / (32 * 1024));

    assertThat(IoWindow.length(buffers, 0)).isEqualTo(window);
    assertThat(IoWindow.length(buffers, 1000 - 10)).isEqualTo(10);
  }

  @Test
  void shouldTakeOneBufferWhenItIsLargerThanTheWindow() {
    ByteBuffer[] buffers = buffers(3, (int) IoWindow.WINDOW_BYTES * 2);

    assertThat(IoWindow.length(buffers, 1)).isEqualTo(1);
  }

  @Test
  void shouldCountOnlyRemainingBytesWhenABufferIsPartlyDone() {
    ByteBuffer[] buffers = buffers(4, (int) IoWindow.WINDOW_BYTES);
    buffers[0].position(buffers[0].limit() - 1);

    assertThat(IoWindow.length(buffers, 0)).isEqualTo(2);
  }

  @Test
  void shouldTakeEveryRemainingBufferWhenTheyAreEmpty() {
    ByteBuffer[] buffers = buffers(5, 0);

    assertThat(IoWindow.length(buffers, 2)).isEqualTo(3);
  }
}
