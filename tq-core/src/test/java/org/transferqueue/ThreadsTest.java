package org.transferqueue;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.ThreadFactory;
import org.junit.jupiter.api.Test;

class ThreadsTest {
  private static final Runnable NOTHING = () -> {};

  @Test
  void shouldNameDaemonThreadsFromOne() {
    ThreadFactory factory = Threads.daemon("tq-test");
    Thread first = factory.newThread(NOTHING);
    Thread second = factory.newThread(NOTHING);

    assertThat(first.getName()).isEqualTo("tq-test-1");
    assertThat(second.getName()).isEqualTo("tq-test-2");
    assertThat(first.isDaemon()).isTrue();
    assertThat(first.isVirtual()).isFalse();
  }

  @Test
  void shouldGiveEveryThreadOfANamedDaemonFactoryTheSameName() {
    ThreadFactory factory = Threads.namedDaemon("tq-single");

    assertThat(factory.newThread(NOTHING).getName()).isEqualTo("tq-single");
    assertThat(factory.newThread(NOTHING).getName()).isEqualTo("tq-single");
    assertThat(factory.newThread(NOTHING).isDaemon()).isTrue();
  }

  @Test
  void shouldNameVirtualThreadsFromZero() {
    ThreadFactory factory = Threads.virtual("tq-loader");
    Thread first = factory.newThread(NOTHING);

    assertThat(first.isVirtual()).isTrue();
    assertThat(first.getName()).isEqualTo("tq-loader-0");
    assertThat(factory.newThread(NOTHING).getName()).isEqualTo("tq-loader-1");
  }
}
