package org.transferqueue.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Method;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;

class SeedsTest {
  private final String before = System.getProperty(Seeds.PROPERTY);

  @AfterEach
  void restore() {
    if (before == null) {
      System.clearProperty(Seeds.PROPERTY);
    } else {
      System.setProperty(Seeds.PROPERTY, before);
    }
  }

  @Test
  void shouldReplayTheSeedOfTheSystemProperty() {
    System.setProperty(Seeds.PROPERTY, "-8412");

    assertThat(Seeds.seed()).isEqualTo(-8412L);
    assertThat(Seeds.seed()).isEqualTo(-8412L);
  }

  @Test
  void shouldDrawFreshSeedsWithoutTheProperty() {
    System.clearProperty(Seeds.PROPERTY);

    assertThat(Seeds.seed()).isNotEqualTo(Seeds.seed());
  }

  @Test
  void shouldAttachTheLastSeedAndItsReplayCommandToAFailure() throws Exception {
    System.setProperty(Seeds.PROPERTY, "42");
    Seeds extension = new Seeds();
    ExtensionContext context = context(getClass().getDeclaredMethod("restore"));
    extension.beforeEach(context);
    Seeds.seed();
    AssertionError failure = new AssertionError("boom");

    assertThatThrownBy(() -> extension.handleTestExecutionException(context, failure))
        .isSameAs(failure);
    assertThat(failure.getSuppressed())
        .singleElement()
        .satisfies(
            s ->
                assertThat(s.getMessage())
                    .isEqualTo(
                        "seed=42 replay: mvn -pl tq-core test -Dtest='SeedsTest#restore'"
                            + " -Dtq.seed=42"));
  }

  @Test
  void shouldLeaveAFailureWithoutSeedsAlone() throws Exception {
    Seeds extension = new Seeds();
    ExtensionContext context = context(getClass().getDeclaredMethod("restore"));
    extension.beforeEach(context);
    AssertionError failure = new AssertionError("boom");

    assertThatThrownBy(() -> extension.handleTestExecutionException(context, failure))
        .isSameAs(failure);
    assertThat(failure.getSuppressed()).isEmpty();
  }

  private static ExtensionContext context(Method method) {
    return (ExtensionContext)
        java.lang.reflect.Proxy.newProxyInstance(
            SeedsTest.class.getClassLoader(),
            new Class<?>[] {ExtensionContext.class},
            (proxy, m, args) ->
                switch (m.getName()) {
                  case "getRequiredTestClass" -> SeedsTest.class;
                  case "getRequiredTestMethod" -> method;
                  case "getTestMethod" -> Optional.of(method);
                  case "getDisplayName" -> "restore()";
                  default -> throw new UnsupportedOperationException(m.getName());
                });
  }
}
