package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.transferqueue.TqException;

/** A role started with {@code -Dtq.parent.pid} stops when that process ends. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ParentWatchTest {
  private static Process sleeper() throws IOException {
    return new ProcessBuilder("sleep", "120").start();
  }

  @Test
  void shouldRunTheActionWhenTheWatchedProcessEnds() throws Exception {
    Process parent = sleeper();
    CountDownLatch ran = new CountDownLatch(1);
    try {
      CompletableFuture<Void> watch =
          ParentWatch.watch(Long.toString(parent.pid()), ran::countDown).orElseThrow();
      assertThat(ran.await(300, TimeUnit.MILLISECONDS)).as("ran while the parent lives").isFalse();
      assertThat(watch).isNotDone();
      parent.destroyForcibly();
      assertThat(ran.await(20, TimeUnit.SECONDS)).as("ran after the parent ended").isTrue();
    } finally {
      parent.destroyForcibly();
    }
  }

  @Test
  void shouldRunTheActionAtOnceWhenTheProcessIsGoneAlready() throws Exception {
    Process parent = sleeper();
    parent.destroyForcibly().waitFor();
    CountDownLatch ran = new CountDownLatch(1);
    ParentWatch.watch(Long.toString(parent.pid()), ran::countDown);
    assertThat(ran.await(20, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void shouldNotWatchWhenThePropertyIsUnset() {
    assertThat(ParentWatch.watch(null, () -> {})).isEmpty();
    assertThat(ParentWatch.watch(" ", () -> {})).isEmpty();
  }

  @Test
  void shouldRejectAValueThatIsNotAProcessIdWhenParsing() {
    assertThatThrownBy(() -> ParentWatch.watch("parent", () -> {}))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("-Dtq.parent.pid=parent");
    assertThatThrownBy(() -> ParentWatch.watch("-3", () -> {}))
        .isInstanceOf(TqException.class)
        .hasMessageContaining("-Dtq.parent.pid=-3");
  }
}
