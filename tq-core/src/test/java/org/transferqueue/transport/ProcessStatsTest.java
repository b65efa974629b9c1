package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.TqException;
import org.transferqueue.codec.MsgpackReader;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;

/** The transport's own PING and PROCESS_STATS messages, answered by every server. */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ProcessStatsTest {
  private static final int ALLOCATE = 16;
  private static final Duration CALL = Duration.ofSeconds(20);
  private static final int ALLOCATED_BYTES = 8 << 20;

  private static volatile Object sink;

  @Test
  void shouldAnswerPingAndProcessStatsWithoutAnyRegisteredHandler(BufferAllocator allocator) {
    TransportConfig config = TransportConfig.builder().build();
    try (TransportServer server = TransportServer.builder(config, allocator).start();
        TransportClient client = new TransportClient(config, allocator)) {
      client.ping(server.address(), CALL);
      assertThat(client.processStats(server.address(), CALL).heapAllocatedBytes()).isPositive();
    }
  }

  @Test
  void shouldCountHeapTheServerAllocatesBetweenTwoReadings(BufferAllocator allocator) {
    TransportConfig config = TransportConfig.builder().build();
    try (TransportServer server =
            TransportServer.builder(config, allocator)
                .handler(
                    ALLOCATE,
                    RequestHandler.replying(
                        r -> {
                          sink = new byte[ALLOCATED_BYTES];
                          return Reply.empty();
                        }))
                .start();
        TransportClient client = new TransportClient(config, allocator)) {
      long before = client.processStats(server.address(), CALL).heapAllocatedBytes();
      client.call(server.address(), Request.of(ALLOCATE, new byte[0])).close();
      long after = client.processStats(server.address(), CALL).heapAllocatedBytes();

      assertThat(after - before).isGreaterThanOrEqualTo(ALLOCATED_BYTES);
      assertThat(ProcessStats.current().heapAllocatedBytes()).isGreaterThanOrEqualTo(after);
    }
  }

  @Test
  void shouldRequireTheTokenForTheTransportsOwnMessages(BufferAllocator allocator) {
    try (TransportServer server =
            TransportServer.builder(TransportConfig.builder().authToken("right").build(), allocator)
                .start();
        TransportClient client =
            new TransportClient(TransportConfig.builder().authToken("wrong").build(), allocator)) {
      assertThatThrownBy(() -> client.ping(server.address(), CALL))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHENTICATED));
    }
  }

  @Test
  void shouldRejectMalformedProcessStatsReply() {
    assertThatThrownBy(() -> ControlMessages.decodeProcessStats(new byte[] {(byte) 0x90}, "x"))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR));
    assertThatThrownBy(() -> ControlMessages.decodeProcessStats(new byte[] {(byte) 0xc1}, "x"))
        .isInstanceOf(ProtocolException.class);
    assertThat(
            ControlMessages.decodeProcessStats(
                    ControlMessages.processStatsMetadata(new ProcessStats(42)), "x")
                .heapAllocatedBytes())
        .isEqualTo(42);
  }

  @Test
  void shouldAppendThePoolOnlyWhenSharedMemoryIsOn() {
    byte[] off = ControlMessages.processStatsMetadata(new ProcessStats(42), SharedMemoryStats.OFF);
    assertThat(off).isEqualTo(ControlMessages.processStatsMetadata(new ProcessStats(42)));
    assertThat(off).containsExactly(0x91, 42);

    byte[] on =
        ControlMessages.processStatsMetadata(
            new ProcessStats(42),
            new SharedMemoryStats(true, 1, 4096, 640, 3, 1, 2, 128, 5, 8192, 10, 20, 30, 40));
    MsgpackReader in = new MsgpackReader(on, "process stats");
    assertThat(in.readArrayHeader()).isEqualTo(2);
    assertThat(in.readLong()).isEqualTo(42);
    assertThat(in.readArrayHeader()).isEqualTo(9);
    long[] figures = new long[9];
    for (int i = 0; i < figures.length; i++) {
      figures[i] = in.readLong();
    }
    assertThat(figures).containsExactly(4096, 640, 2, 5, 8192, 10, 20, 30, 40);
    assertThat(in.hasRemaining()).isFalse();
    assertThat(ControlMessages.decodeProcessStats(on, "x").heapAllocatedBytes()).isEqualTo(42);
  }
}
