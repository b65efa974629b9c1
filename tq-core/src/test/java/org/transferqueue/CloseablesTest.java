package org.transferqueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class CloseablesTest {
  @Test
  void shouldCloseEveryResourceInOrderWhenNoneFails() {
    List<String> closed = new ArrayList<>();
    Closeables.closeAll(
        List.of(() -> closed.add("a"), () -> closed.add("b"), () -> closed.add("c")));
    assertThat(closed).containsExactly("a", "b", "c");
  }

  @Test
  void shouldThrowFirstFailureWithLaterOnesSuppressedWhenSeveralFail() {
    List<String> closed = new ArrayList<>();
    IllegalStateException first = new IllegalStateException("first");
    IllegalArgumentException second = new IllegalArgumentException("second");
    List<AutoCloseable> resources =
        List.of(
            () -> {
              throw first;
            },
            () -> closed.add("b"),
            () -> {
              throw second;
            },
            () -> closed.add("d"));

    assertThatThrownBy(() -> Closeables.closeAll(resources))
        .isSameAs(first)
        .satisfies(e -> assertThat(e.getSuppressed()).containsExactly(second));
    assertThat(closed).containsExactly("b", "d");
  }

  @Test
  void shouldWrapCheckedFailureAsInternalWhenItComesFirst() {
    IOException checked = new IOException("disk gone");
    AutoCloseable failing =
        () -> {
          throw checked;
        };

    assertThatThrownBy(() -> Closeables.closeAll(List.of(failing)))
        .isInstanceOf(TqException.class)
        .hasCause(checked)
        .satisfies(e -> assertThat(((TqException) e).code()).isEqualTo(ErrorCode.INTERNAL));
  }

  @Test
  void shouldSkipNullResourcesWhenListed() {
    List<String> closed = new ArrayList<>();
    Closeables.closeAll(Arrays.asList(null, () -> closed.add("b"), null));
    assertThat(closed).containsExactly("b");
  }
}
