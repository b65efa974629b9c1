package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.logging.Level;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/** {@code logging.level} takes effect on the console logging of the {@code tq} commands. */
class LogLevelsTest {

  @Test
  void shouldSetTheRootLoggerToTheConfiguredLevel() {
    Logger root = Logger.getLogger("");
    Level before = root.getLevel();
    try {
      LogLevels.apply(System.Logger.Level.WARNING);
      assertThat(root.getLevel()).isEqualTo(Level.WARNING);
      assertThat(root.isLoggable(Level.INFO)).isFalse();
      LogLevels.apply(System.Logger.Level.DEBUG);
      assertThat(root.getLevel()).isEqualTo(Level.FINE);
      assertThat(root.getHandlers()).allMatch(h -> h.getLevel() == Level.FINE);
    } finally {
      root.setLevel(before);
      for (var handler : root.getHandlers()) {
        handler.setLevel(Level.INFO);
      }
    }
  }
}
