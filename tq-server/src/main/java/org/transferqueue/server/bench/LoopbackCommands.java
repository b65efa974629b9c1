package org.transferqueue.server.bench;

import java.util.List;
import java.util.Objects;

/**
 * The command lines {@link BenchMode#LOOPBACK} and {@link BenchMode#SHM} start their child
 * processes with: the JVM, its options and class path, then the main class.
 *
 * @param tq runs {@code tq}; the role's subcommand and options are appended
 * @param receiver runs the loopback baseline's receiver, which prints {@code listening on
 *     HOST:PORT}, reads length-prefixed messages from one connection and answers each with a byte
 */
public record LoopbackCommands(List<String> tq, List<String> receiver) {
  /**
   * Copies the lists.
   *
   * @throws IllegalArgumentException when a command is empty
   */
  public LoopbackCommands {
    tq = List.copyOf(Objects.requireNonNull(tq, "tq"));
    receiver = List.copyOf(Objects.requireNonNull(receiver, "receiver"));
    if (tq.isEmpty() || receiver.isEmpty()) {
      throw new IllegalArgumentException("tq=" + tq + ", receiver=" + receiver + " need a command");
    }
  }
}
