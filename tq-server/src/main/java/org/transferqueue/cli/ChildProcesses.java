package org.transferqueue.cli;

import java.nio.file.Path;
import java.util.List;

/** Command lines that run {@code tq} again in a child JVM (same JDK, same class path). */
final class ChildProcesses {
  private ChildProcesses() {}

  /**
   * The command that starts {@code tq} in a new JVM; append the subcommand and its options.
   *
   * @return java executable, JVM options, class path and the main class
   */
  static List<String> javaCommand() {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return List.of(
        java,
        "--enable-native-access=ALL-UNNAMED",
        "-cp",
        System.getProperty("java.class.path"),
        TqCommand.class.getName());
  }
}
