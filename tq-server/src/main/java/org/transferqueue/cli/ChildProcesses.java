package org.transferqueue.cli;

import java.util.List;
import org.transferqueue.server.process.ChildJvm;

/**
 * Command lines that run {@code tq} again in a child JVM: the same JDK, the same JVM options (heap,
 * system properties, native access; a debugger agent is left out, its port can only be bound once)
 * and the same class path; built by {@link ChildJvm#command}.
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
    return ChildJvm.command(main, List.of(), List.of());
  }
}
