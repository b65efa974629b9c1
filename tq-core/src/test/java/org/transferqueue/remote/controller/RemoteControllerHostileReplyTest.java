package org.transferqueue.remote.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.config.HostPort;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.remote.MetaWriter;

/** Replies of a controller that answer more than was asked are protocol errors. */
class RemoteControllerHostileReplyTest {
  private static final Duration CALL = Duration.ofSeconds(5);
  private static final HostPort ADDRESS = new HostPort("127.0.0.1", 1);

  @Test
  void shouldFailProtocolErrorWhenResolveKeysAnswersMoreRowsThanKeys() {
    BatchMeta three = BatchMeta.builder().globalIndexes(0, 1, 2).partitionId("p").build();
    RemoteController controller =
        new RemoteController(
            (type, metadata, timeout) -> new MetaWriter().batchMeta(three).toByteArray(),
            ADDRESS,
            CALL,
            CALL);
    assertThatThrownBy(() -> controller.resolveKeys("p", List.of("k"), false))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR))
        .hasMessageContaining("RESOLVE_KEYS reply has rows=3 > keys=1");
  }

  @Test
  void shouldAcceptResolveKeysAnsweringFewerRowsThanKeys() {
    BatchMeta one = BatchMeta.builder().globalIndexes(4).partitionId("p").build();
    RemoteController controller =
        new RemoteController(
            (type, metadata, timeout) -> new MetaWriter().batchMeta(one).toByteArray(),
            ADDRESS,
            CALL,
            CALL);
    assertThat(controller.resolveKeys("p", List.of("a", "b"), false).globalIndexes())
        .containsExactly(4L);
  }

  @Test
  void shouldFailProtocolErrorWhenResolveIndexesAnswersMoreKeysThanIndexes() {
    RemoteController controller =
        new RemoteController(
            (type, metadata, timeout) -> new MetaWriter().strings(List.of("a", "b")).toByteArray(),
            ADDRESS,
            CALL,
            CALL);
    assertThatThrownBy(() -> controller.resolveIndexes("p", List.of(7L)))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR))
        .hasMessageContaining("RESOLVE_INDEXES reply has keys=2 > indexes=1");
  }

  @Test
  void shouldFailProtocolErrorWhenResolveKeysForPutAnswersNilCreatedIndexes() {
    BatchMeta one = BatchMeta.builder().globalIndexes(4).partitionId("p").build();
    RemoteController controller =
        new RemoteController(
            (type, metadata, timeout) ->
                new MetaWriter().arrayHeader(2).batchMeta(one).nil().toByteArray(),
            ADDRESS,
            CALL,
            CALL);
    assertThatThrownBy(() -> controller.resolveKeysForPut("p", List.of("k"), Map.of(), 1))
        .isInstanceOfSatisfying(
            ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PROTOCOL_ERROR))
        .hasMessageContaining("malformed reply to RESOLVE_KEYS_FOR_PUT");
  }
}
