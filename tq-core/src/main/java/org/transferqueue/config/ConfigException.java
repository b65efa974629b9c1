package org.transferqueue.config;

import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * Invalid configuration: unknown keys, values of the wrong type or out of range, or settings that
 * contradict each other. Always {@link ErrorCode#INVALID_CONFIGURATION}.
 *
 * <p>Carries every problem found in one validation pass, so a user fixes a file in one round; the
 * message lists them one per line, each naming the key and the value.
 */
public final class ConfigException extends TqException {
  private static final long serialVersionUID = 1L;

  private final transient List<ConfigProblem> problems;

  /**
   * Creates an exception listing problems.
   *
   * @param source where the configuration came from (a file name), or null
   * @param problems at least one problem
   * @throws IllegalArgumentException if {@code problems} is empty
   */
  public ConfigException(String source, List<ConfigProblem> problems) {
    super(ErrorCode.INVALID_CONFIGURATION, message(source, problems));
    this.problems = List.copyOf(problems);
  }

  /**
   * Creates an exception for a configuration that could not be read at all (I/O or syntax).
   *
   * @param message what went wrong, naming the source
   * @param cause the underlying failure
   */
  public ConfigException(String message, Throwable cause) {
    super(ErrorCode.INVALID_CONFIGURATION, message, cause);
    this.problems = List.of();
  }

  private static String message(String source, List<ConfigProblem> problems) {
    if (problems.isEmpty()) {
      throw new IllegalArgumentException("a ConfigException needs at least one problem");
    }
    String prefix = source == null ? "" : source + ": ";
    if (problems.size() == 1) {
      return prefix + problems.getFirst();
    }
    StringBuilder sb =
        new StringBuilder(prefix).append(problems.size()).append(" configuration problems:");
    for (ConfigProblem p : problems) {
      sb.append("\n  ").append(p);
    }
    return sb.toString();
  }

  /**
   * The problems found, in the order they were found.
   *
   * @return an unmodifiable list; empty when the configuration could not be read at all
   */
  public List<ConfigProblem> problems() {
    return problems;
  }
}
