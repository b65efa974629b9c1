package org.transferqueue.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayDeque;
import org.junit.jupiter.api.Test;
import org.transferqueue.meta.BatchMeta;

/** The loader's acknowledgement tracker: expiry in delivery order, acknowledgement, off switch. */
class RedeliveriesTest {

  private static StreamingLoader.Item item(long id) {
    return new StreamingLoader.Item(id, 0, (int) id, BatchMeta.empty(), null, 1, null);
  }

  @Test
  void shouldRequeueExpiredDeliveriesAtTheFrontInDeliveryOrderWithTheNextAttempt() {
    Redeliveries redeliveries = new Redeliveries(100);
    ArrayDeque<StreamingLoader.Item> queue = new ArrayDeque<>();
    queue.add(item(9));
    redeliveries.delivered(item(1), 0);
    redeliveries.delivered(item(2), 10);
    redeliveries.delivered(item(3), 500);

    long earliest = redeliveries.requeueExpired(110, queue);

    assertThat(queue).extracting(StreamingLoader.Item::id).containsExactly(1L, 2L, 9L);
    assertThat(queue.peekFirst().attempt()).isEqualTo(2);
    assertThat(queue.peekFirst().data()).isNull();
    assertThat(earliest).isEqualTo(600);
    assertThat(redeliveries.isEmpty()).isFalse();
  }

  @Test
  void shouldForgetAnAcknowledgedDeliveryAndItsQueuedRedelivery() {
    Redeliveries redeliveries = new Redeliveries(100);
    ArrayDeque<StreamingLoader.Item> queue = new ArrayDeque<>();
    redeliveries.delivered(item(1), 0);
    redeliveries.delivered(item(2), 0);
    redeliveries.requeueExpired(100, queue);
    redeliveries.delivered(queue.poll(), 100);

    redeliveries.acknowledge(1, queue);
    redeliveries.acknowledge(2, queue);

    assertThat(queue).isEmpty();
    assertThat(redeliveries.isEmpty()).isTrue();
    assertThat(redeliveries.requeueExpired(10_000, queue)).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void shouldTrackNothingWhenAcknowledgementsAreOff() {
    Redeliveries redeliveries = new Redeliveries(0);
    ArrayDeque<StreamingLoader.Item> queue = new ArrayDeque<>();
    redeliveries.delivered(item(1), 0);

    assertThat(redeliveries.enabled()).isFalse();
    assertThat(redeliveries.isEmpty()).isTrue();
    assertThat(redeliveries.requeueExpired(Long.MAX_VALUE / 2, queue)).isEqualTo(Long.MAX_VALUE);
    assertThat(queue).isEmpty();
  }
}
