package org.transferqueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class CloseStackTest {
  private final List<String> closed = new ArrayList<>();

  private AutoCloseable resource(String name) {
    return () -> closed.add(name);
  }

  @Test
  void shouldCloseInReverseOrderWhenStartUpFails() {
    assertThatThrownBy(
            () -> {
              try (CloseStack cleanup = new CloseStack()) {
                cleanup.push(resource("allocator"));
                cleanup.push(resource("unit"));
                cleanup.push(resource("server"));
                throw new IllegalStateException("bind failed");
              }
            })
        .hasMessage("bind failed");

    assertThat(closed).containsExactly("server", "unit", "allocator");
  }

  @Test
  void shouldLeaveResourcesOpenOnceReleased() {
    try (CloseStack cleanup = new CloseStack()) {
      cleanup.push(resource("allocator"));
      cleanup.push(resource("server"));
      cleanup.release();
    }

    assertThat(closed).isEmpty();
  }

  @Test
  void shouldCloseEveryResourceAndKeepCloseFailuresAsSuppressed() {
    AutoCloseable failing =
        () -> {
          closed.add("failing");
          throw new IllegalStateException("close failed");
        };

    assertThatThrownBy(
            () -> {
              try (CloseStack cleanup = new CloseStack()) {
                cleanup.push(resource("allocator"));
                cleanup.push(failing);
                cleanup.push(null);
                cleanup.push(resource("server"));
                throw new TqException(ErrorCode.CONNECTION_FAILED, "start failed");
              }
            })
        .hasMessageContaining("start failed")
        .satisfies(
            e ->
                assertThat(e.getSuppressed())
                    .singleElement()
                    .satisfies(s -> assertThat(s).hasMessage("close failed")));

    assertThat(closed).containsExactly("server", "failing", "allocator");
  }

  @Test
  void shouldRejectPushAfterRelease() {
    CloseStack cleanup = new CloseStack();
    cleanup.release();

    assertThatThrownBy(() -> cleanup.push(resource("late")))
        .isInstanceOf(IllegalStateException.class);
  }
}
