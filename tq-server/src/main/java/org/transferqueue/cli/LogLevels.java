package org.transferqueue.cli;

import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Applies {@code logging.level} to this process's console logging: the {@code tq} commands log
 * through {@link System.Logger}, which the JDK backs with {@code java.util.logging}, whose own
 * default (INFO) would otherwise print lines below the configured level. A process started with its
 * own {@code java.util.logging.config.file} keeps that configuration.
 */
final class LogLevels {
  private LogLevels() {}

  /**
   * Sets the root logger and its handlers to {@code level}.
   *
   * @param level the configured level
   */
  static void apply(System.Logger.Level level) {
    if (System.getProperty("java.util.logging.config.file") != null
        || System.getProperty("java.util.logging.config.class") != null) {
      return;
    }
    Level jul = toJul(level);
    Logger root = Logger.getLogger("");
    root.setLevel(jul);
    for (Handler handler : root.getHandlers()) {
      handler.setLevel(jul);
    }
  }

  /** The {@code java.util.logging} level that shows exactly the records of {@code level}. */
  static Level toJul(System.Logger.Level level) {
    return switch (level) {
      case ALL -> Level.ALL;
      case TRACE -> Level.FINER;
      case DEBUG -> Level.FINE;
      case INFO -> Level.INFO;
      case WARNING -> Level.WARNING;
      case ERROR -> Level.SEVERE;
      case OFF -> Level.OFF;
    };
  }
}
