package org.transferqueue.cli;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Command lines that run {@code tq} again in a child JVM: the same JDK, the same JVM options (heap,
 * system properties, native access; a debugger agent is left out, its port can only be bound once)
 * and the same class path.
 */
final class ChildProcesses {
  private ChildProcesses() {}

  /**
   * The command that starts {@code tq} in a new JVM; append the subcommand and its options.
   *
   * @return java executable, JVM options, class path and the main class
   */
  static List<String> javaCommand() {
    return javaCommand(TqCommand.class);
  }

  /**
   * The command that runs a main class of this class path in a new JVM.
   *
   * @param main the class whose {@code main} runs
   * @return java executable, JVM options, class path and the main class
   */
  static List<String> javaCommand(Class<?> main) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    boolean nativeAccess = false;
    for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (option.startsWith("-agentlib:jdwp") || option.startsWith("-Xrunjdwp")) {
        continue;
      }
      nativeAccess |= option.startsWith("--enable-native-access");
      command.add(option);
    }
    if (!nativeAccess) {
      command.add("--enable-native-access=ALL-UNNAMED");
    }
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(main.getName());
    return command;
  }
}
