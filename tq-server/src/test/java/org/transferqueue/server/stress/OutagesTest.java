package org.transferqueue.server.stress;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.transferqueue.DeadlineExceededException;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.meta.BatchMeta;

/**
 * The outages of a chaos run: which client operation ends the measurement of a recovery, and which
 * errors make a client wait and retry.
 */
class OutagesTest {
  private final AtomicLong now = new AtomicLong(1_000);

  private static BatchMeta samples(long... globalIndexes) {
    return BatchMeta.builder().globalIndexes(globalIndexes).partitionId("p").build();
  }

  private Outages chaos() {
    ChaosPlan plan =
        new ChaosPlan(
            EnumSet.allOf(ChaosRole.class),
            Duration.ofSeconds(20),
            true,
            Optional.empty(),
            Optional.empty(),
            Duration.ofSeconds(60));
    return Outages.chaos(now::get, plan, 2);
  }

  @Test
  void shouldEndAStorageOutageWithTheFirstOpOnOneOfItsSamplesThatStartedAfterTheKill() {
    Outages outages = chaos();
    Outages.Outage outage = outages.killing(ChaosRole.STORAGE_UNIT, 1, "storage-unit 1");
    now.set(2_000);
    outages.ready(outage);
    now.set(2_500);
    outages.answering(outage);

    now.set(3_000);
    outages.succeeded(StressOp.PUT, 900, samples(1, 3)); // started before the kill
    outages.succeeded(StressOp.PUT, 1_100, samples(0, 2)); // unit 0's samples only
    outages.succeeded(StressOp.FETCH, 1_100, samples(1)); // a fetch does not reach storage
    assertThat(outages.recoveries().getFirst().firstOpNanos()).isEqualTo(-1);
    now.set(4_000);
    outages.succeeded(StressOp.GET, 1_200, samples(2, 5));
    now.set(5_000);
    outages.succeeded(StressOp.PUT, 1_300, samples(7));

    ChaosFigures.Recovery recovery = outages.recoveries().getFirst();
    assertThat(recovery.readyNanos()).isEqualTo(1_000);
    assertThat(recovery.answeringNanos()).isEqualTo(1_500);
    assertThat(recovery.firstOpNanos()).isEqualTo(3_000);
    assertThat(recovery.failure()).isNull();
  }

  @Test
  void shouldEndAControllerOutageWithAPutOrFetchButNotAGet() {
    Outages outages = chaos();
    Outages.Outage outage = outages.killing(ChaosRole.CONTROLLER, 0, "controller");
    outages.answering(outage);

    now.set(1_500);
    outages.succeeded(StressOp.GET, 1_200, samples(0));
    now.set(1_600);
    outages.succeeded(StressOp.FETCH, 1_200, samples());

    assertThat(outages.recoveries().getFirst().firstOpNanos()).isEqualTo(600);
  }

  @Test
  void shouldReportARoleThatDidNotComeBack() {
    Outages outages = chaos();
    Outages.Outage outage = outages.killing(ChaosRole.STORE_NODE, 0, "store-node 0");
    outages.failed(outage, "CORRUPT_DATA: journal damaged");

    ChaosFigures.Recovery recovery = outages.recoveries().getFirst();
    assertThat(recovery.failure()).isEqualTo("CORRUPT_DATA: journal damaged");
    assertThat(recovery.answeringNanos()).isEqualTo(-1);
  }

  @Test
  void shouldRetryOnlyCallsThatFoundARoleUnreachableAndOnlyInAChaosRun() {
    assertThat(Outages.unreachable(new TqException(ErrorCode.CONNECTION_FAILED, "x"))).isTrue();
    assertThat(Outages.unreachable(new DeadlineExceededException("x"))).isTrue();
    assertThat(Outages.unreachable(new TqException(ErrorCode.CLOSED, "x"))).isTrue();
    assertThat(Outages.unreachable(new TqException(ErrorCode.NOT_FOUND, "x"))).isFalse();
    assertThat(Outages.unreachable(new TqException(ErrorCode.STALE_METADATA, "x"))).isFalse();

    Outages none = Outages.none(now::get);
    assertThat(none.retries()).isFalse();
    assertThat(none.awaitRetry(0, now.get())).isFalse();
    assertThat(chaos().retries()).isTrue();
  }
}
