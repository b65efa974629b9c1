package org.transferqueue.remote.objectstore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.objectstore.StoreConfig;
import org.transferqueue.remote.Wire;
import org.transferqueue.transport.InProcessExchange;
import org.transferqueue.transport.TransportConfig;

/** {@link RemoteObjectStore} against store-node replies that contradict themselves. */
@ExtendWith(LeakCheckExtension.class)
class RemoteObjectStoreHostileReplyTest {
  private static final HostPort NODE = new HostPort("127.0.0.1", 1);

  private static RemoteObjectStore storeAnswering(
      BufferAllocator allocator, long claimedSize, int bodyBytes) {
    RemoteObjectStore store =
        RemoteObjectStore.connect(
            List.of(NODE),
            TransportConfig.builder().defaultCallTimeout(Duration.ofSeconds(5)).build(),
            allocator,
            (address, request, destination, timeout) -> {
              NativeBuffer body = allocator.allocate(bodyBytes);
              body.segment().fill((byte) 7);
              byte[] meta = new Wire.Writer().array(1).longs(new long[] {claimedSize}).toBytes();
              return CompletableFuture.completedFuture(
                  InProcessExchange.response(meta, List.of(body)));
            });
    assertThat(
            store.setup(
                StoreConfig.builder()
                    .localHostname("client")
                    .globalSegmentSize(1 << 20)
                    .localBufferSize(1 << 20)
                    .build()))
        .isZero();
    return store;
  }

  @Test
  void shouldFailWithAProtocolErrorAndKeepNoBufferWhenTheBodyDisagreesWithTheSize(
      BufferAllocator allocator) {
    try (RemoteObjectStore store = storeAnswering(allocator, 5, 3)) {
      // A reply that contradicts itself is not worth a retry: the caller sees the typed error.
      assertThatThrownBy(() -> store.getBatch(List.of("k")))
          .isInstanceOfSatisfying(
              ProtocolException.class,
              e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR))
          .hasMessageContaining("size=5");
    }
  }

  @Test
  void shouldReturnTheBodyWhenItMatchesTheSize(BufferAllocator allocator) {
    try (RemoteObjectStore store = storeAnswering(allocator, 3, 3)) {
      List<NativeBuffer> read = store.getBatch(List.of("k"));
      try (NativeBuffer b = read.getFirst()) {
        assertThat(b.lengthBytes()).isEqualTo(3);
        assertThat(b.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 2)).isEqualTo((byte) 7);
      }
    }
  }
}
