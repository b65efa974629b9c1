package org.transferqueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class DistinctErrorLogTest {
  private final AtomicLong wallMillis = new AtomicLong(1_000);
  private final Clock clock =
      new Clock() {
        @Override
        public long nanoTime() {
          return 0;
        }

        @Override
        public long epochMillis() {
          return wallMillis.get();
        }
      };

  @Test
  void shouldCountEachKindWithFirstAndLastTimestamp() {
    DistinctErrorLog log = new DistinctErrorLog(System.getLogger("test"), 8, clock);
    log.onError("rollback", new TqException(ErrorCode.STORAGE_ERROR, "disk"));
    wallMillis.set(2_000);
    log.onError("rollback", new TqException(ErrorCode.STORAGE_ERROR, "disk again"));
    wallMillis.set(3_000);
    log.onError("rollback", new IllegalStateException("bug"));

    assertThat(log.errorCount()).isEqualTo(3);
    assertThat(log.entries())
        .containsExactly(
            new DistinctErrorLog.Entry("rollback STORAGE_ERROR", 2, 1_000, 2_000),
            new DistinctErrorLog.Entry(
                "rollback java.lang.IllegalStateException", 1, 3_000, 3_000));
    assertThat(log.counts())
        .containsEntry("rollback STORAGE_ERROR", 2L)
        .containsEntry("rollback java.lang.IllegalStateException", 1L);
  }

  @Test
  void shouldKeepAtMostMaxDistinctKindsButCountEveryError() {
    DistinctErrorLog log = new DistinctErrorLog(System.getLogger("test"), 3, clock);
    for (int i = 0; i < 100; i++) {
      log.record("kind-" + i, "error " + i, null);
    }
    log.record("kind-0", "error 0 again", null);

    assertThat(log.errorCount()).isEqualTo(101);
    List<DistinctErrorLog.Entry> entries = log.entries();
    assertThat(entries).hasSize(3);
    assertThat(log.counts()).containsEntry("kind-0", 2L).doesNotContainKey("kind-50");
  }

  @Test
  void shouldRecordTheFailureOfWorkThatOutlivesItsDeadline() {
    DistinctErrorLog log = new DistinctErrorLog(System.getLogger("test"), 8, clock);
    CompletableFuture<Void> work = new CompletableFuture<>();

    assertThat(log.awaitWithin(work, 0, "cleanup")).isFalse();
    work.completeExceptionally(new TqException(ErrorCode.DEADLINE_EXCEEDED, "late"));

    assertThat(log.counts()).containsExactly(java.util.Map.entry("cleanup DEADLINE_EXCEEDED", 1L));
  }

  @Test
  void shouldRejectANonPositiveBound() {
    assertThatThrownBy(() -> new DistinctErrorLog(System.getLogger("test"), 0, clock))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxDistinct=0");
  }
}
