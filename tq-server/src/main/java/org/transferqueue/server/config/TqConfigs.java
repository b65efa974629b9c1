package org.transferqueue.server.config;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.config.ConfigException;
import org.transferqueue.config.ConfigProblem;
import org.transferqueue.config.TqConfig;

/**
 * Loads the YAML configuration file into a validated {@link TqConfig}.
 *
 * <p>Precedence, lowest first: the defaults, the file, the environment variables listed by {@link
 * org.transferqueue.config.ConfigKey#environmentVariables()}. Every problem in the file (unknown
 * keys at any level, wrong types, values out of range, contradicting settings) is reported in one
 * {@link ConfigException} that names each full key path and value, for example {@code
 * backend.SimpleStorage.num_data_storage_units: "three" is not an integer}.
 *
 * <pre>{@code
 * TqConfig config = TqConfigs.load(Path.of("config/tq.yaml"), System.getenv());
 * }</pre>
 *
 * <p>Stateless and thread-safe.
 */
public final class TqConfigs {
  private TqConfigs() {}

  /**
   * Loads a configuration file without environment overrides.
   *
   * @param file a UTF-8 YAML file
   * @return the validated configuration
   * @throws ConfigException when the file cannot be read or holds invalid configuration
   */
  public static TqConfig load(Path file) {
    return load(file, Map.of());
  }

  /**
   * Loads a configuration file, then applies environment overrides.
   *
   * @param file a UTF-8 YAML file
   * @param environment the environment, normally {@code System.getenv()}
   * @return the validated configuration
   * @throws ConfigException when the file cannot be read or the configuration is invalid
   */
  public static TqConfig load(Path file, Map<String, String> environment) {
    Objects.requireNonNull(file, "file");
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new ConfigException("configuration file " + file + " does not exist", e);
    } catch (IOException e) {
      throw new ConfigException("configuration file " + file + " cannot be read: " + e, e);
    }
    return parse(text, file.toString(), environment);
  }

  /**
   * Parses YAML text without environment overrides.
   *
   * @param yaml the document; empty means all defaults
   * @return the validated configuration
   * @throws ConfigException when the text is invalid
   */
  public static TqConfig parse(String yaml) {
    return parse(yaml, Map.of());
  }

  /**
   * Parses YAML text, then applies environment overrides.
   *
   * @param yaml the document; empty means all defaults
   * @param environment the environment variables
   * @return the validated configuration
   * @throws ConfigException when the text or an override is invalid
   */
  public static TqConfig parse(String yaml, Map<String, String> environment) {
    return parse(yaml, null, environment);
  }

  /**
   * Parses YAML text, applies environment overrides, then sets keys of a program's own choosing
   * (for example the storage backend a benchmark case runs on), which win over both.
   *
   * @param yaml the document; empty means all defaults
   * @param source what to call the document in messages (a file name), or null
   * @param environment the environment variables
   * @param overrides full dotted keys to values, applied last in iteration order
   * @return the validated configuration
   * @throws ConfigException when the text, an environment variable or an override is invalid
   */
  public static TqConfig parse(
      String yaml, String source, Map<String, String> environment, Map<String, ?> overrides) {
    Objects.requireNonNull(overrides, "overrides");
    return read(yaml, source, environment, overrides);
  }

  private static TqConfig parse(String yaml, String source, Map<String, String> environment) {
    return read(yaml, source, environment, Map.of());
  }

  private static TqConfig read(
      String yaml, String source, Map<String, String> environment, Map<String, ?> overrides) {
    Objects.requireNonNull(yaml, "yaml");
    Objects.requireNonNull(environment, "environment");
    TqConfig.Builder builder = TqConfig.builder();
    List<ConfigProblem> problems =
        new ArrayList<>(
            new YamlConfigReader(builder).read(yaml, source == null ? "<string>" : source));
    try {
      builder.applyEnvironment(environment);
    } catch (ConfigException e) {
      problems.addAll(e.problems());
    }
    for (Map.Entry<String, ?> override : overrides.entrySet()) {
      try {
        builder.set(override.getKey(), override.getValue());
      } catch (ConfigException e) {
        problems.addAll(e.problems());
      }
    }
    // Validate what could be set even when some keys failed, so one run reports everything.
    try {
      TqConfig config = builder.build();
      if (problems.isEmpty()) {
        return config;
      }
    } catch (ConfigException e) {
      problems.addAll(e.problems());
    }
    throw new ConfigException(source, problems);
  }
}
