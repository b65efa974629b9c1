package org.transferqueue.config;

import java.util.List;
import java.util.Objects;

/**
 * Logs the {@linkplain TqConfig#warnings() warnings} of a configuration: every process that starts
 * from a configuration (an embedded system, a client, a server role) calls {@link #log} once, so
 * each setting that has no effect in this build is named once, with the reason, instead of being
 * ignored silently. Stateless and thread-safe.
 */
public final class ConfigWarnings {
  private static final System.Logger LOG = System.getLogger(ConfigWarnings.class.getName());

  private ConfigWarnings() {}

  /**
   * Logs each warning of {@code config} at {@code WARNING}.
   *
   * @param config the configuration a process starts from
   * @return the warnings logged, for callers that report them elsewhere too
   */
  public static List<ConfigWarning> log(TqConfig config) {
    Objects.requireNonNull(config, "config");
    List<ConfigWarning> warnings = config.warnings();
    for (ConfigWarning warning : warnings) {
      LOG.log(System.Logger.Level.WARNING, "configuration: " + warning);
    }
    return warnings;
  }
}
