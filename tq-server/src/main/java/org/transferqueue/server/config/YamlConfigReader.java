package org.transferqueue.server.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;
import org.snakeyaml.engine.v2.exceptions.YamlEngineException;
import org.snakeyaml.engine.v2.schema.CoreSchema;
import org.transferqueue.config.ConfigException;
import org.transferqueue.config.ConfigKey;
import org.transferqueue.config.ConfigProblem;
import org.transferqueue.config.TqConfig;

/**
 * Walks a YAML document and sets every key it holds on a {@link TqConfig.Builder}, collecting every
 * problem (unknown keys, sections that are not mappings, values of the wrong type) with its full
 * dotted path. One instance per document; not thread-safe.
 */
final class YamlConfigReader {
  /** Keys upstream fills in at run time; accepted only as null, as in upstream's own file. */
  private static final Map<String, String> RUNTIME_KEYS =
      Map.of(
          "metrics.endpoint", "is filled in at run time and must not be set",
          "controller.zmq_info",
              "is filled in at run time and must not be set (use network.controller_address)",
          "backend.SimpleStorage.zmq_info",
              "is filled in at run time and must not be set (use network.storage_unit_addresses)");

  /**
   * Upstream's RayStore backend has no settings: its section is accepted empty (upstream's own file
   * writes {@code RayStore:} with nothing below it) and the backend is not available here.
   */
  private static final String RAY_STORE_SECTION = "backend.RayStore";

  private final TqConfig.Builder builder;
  private final List<ConfigProblem> problems = new ArrayList<>();

  YamlConfigReader(TqConfig.Builder builder) {
    this.builder = builder;
  }

  /**
   * Parses YAML text (YAML 1.2 core schema, duplicate keys rejected) and applies it.
   *
   * @param yaml the document
   * @param source named in syntax errors
   * @return the problems found; empty when every key was set
   * @throws ConfigException when the text is not valid YAML
   */
  List<ConfigProblem> read(String yaml, String source) {
    LoadSettings settings =
        LoadSettings.builder()
            .setLabel(source)
            .setSchema(new CoreSchema())
            .setAllowDuplicateKeys(false)
            .build();
    Object document;
    try {
      document = new Load(settings).loadFromString(yaml);
    } catch (YamlEngineException e) {
      throw new ConfigException(source + ": not valid YAML: " + e.getMessage(), e);
    }
    if (document instanceof Map<?, ?> map) {
      walk("", map);
    } else if (document != null) {
      problems.add(
          ConfigProblem.of(
              "(document)", document, "is not a mapping of sections (metrics, controller, ...)"));
    }
    return problems;
  }

  private void walk(String section, Map<?, ?> map) {
    for (Map.Entry<?, ?> entry : map.entrySet()) {
      if (!(entry.getKey() instanceof String name)) {
        problems.add(
            ConfigProblem.of(
                join(section, ConfigProblem.render(entry.getKey())),
                entry.getValue(),
                "has a key that is not a string"));
        continue;
      }
      String path = join(section, name);
      Object value = entry.getValue();
      Optional<ConfigKey<?>> key = ConfigKey.forKey(path);
      if (key.isPresent()) {
        setKey(key.get(), path, value);
      } else if (ConfigKey.isSection(path)) {
        if (value instanceof Map<?, ?> child) {
          walk(path, child);
        } else if (value != null) { // an empty section keeps the defaults
          problems.add(ConfigProblem.of(path, value, "is not a section (a mapping of keys)"));
        }
      } else if (RUNTIME_KEYS.containsKey(path)) {
        if (value != null) {
          problems.add(ConfigProblem.of(path, value, RUNTIME_KEYS.get(path)));
        }
      } else if (path.equals(RAY_STORE_SECTION)) {
        rayStore(value);
      } else {
        String meant = closestKey(section, name);
        problems.add(
            new ConfigProblem(
                path,
                unknownValue(name, meant, value),
                "is not a known key" + (meant == null ? "" : " (did you mean " + meant + "?)")));
      }
    }
  }

  /** Accepts an empty {@code backend.RayStore} section; that backend takes no keys. */
  private void rayStore(Object value) {
    if (value instanceof Map<?, ?> map) {
      for (Map.Entry<?, ?> entry : map.entrySet()) {
        problems.add(
            new ConfigProblem(
                join(
                    RAY_STORE_SECTION,
                    entry.getKey() instanceof String name
                        ? name
                        : ConfigProblem.render(entry.getKey())),
                summary(entry.getValue()),
                "is not a known key (upstream's RayStore backend has no settings, and this build"
                    + " does not provide it)"));
      }
    } else if (value != null) {
      problems.add(
          ConfigProblem.of(RAY_STORE_SECTION, value, "is not a section (a mapping of keys)"));
    }
  }

  private void setKey(ConfigKey<?> key, String path, Object value) {
    if (value instanceof Map<?, ?> && !key.takesMapping()) {
      problems.add(
          new ConfigProblem(
              path, summary(value), "is a section, but the key takes " + key.typeDescription()));
      return;
    }
    try {
      key.apply(builder, value);
    } catch (ConfigException e) {
      problems.addAll(e.problems());
    }
  }

  private static String join(String section, String name) {
    return section.isEmpty() ? name : section + "." + name;
  }

  private static String summary(Object value) {
    return value instanceof Map<?, ?> ? "{...}" : ConfigProblem.render(value);
  }

  /**
   * Values under unknown keys may be secrets with a misspelled key; do not echo those that look
   * like one or are closest to a secret key.
   */
  private static String unknownValue(String name, String meant, Object value) {
    String lower = name.toLowerCase(Locale.ROOT);
    boolean secretLike =
        lower.contains("token")
            || lower.contains("password")
            || lower.contains("secret")
            || (meant != null && ConfigKey.forKey(meant).map(ConfigKey::secret).orElse(false));
    return value != null && secretLike ? "<redacted>" : summary(value);
  }

  /** The known key or section in the same section closest to a misspelled name, or null. */
  private static String closestKey(String section, String name) {
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : ConfigKey.childrenOf(section)) {
      int d = distance(name.toLowerCase(Locale.ROOT), candidate.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = candidate;
        bestDistance = d;
      }
    }
    return best != null && bestDistance <= Math.max(2, name.length() / 3)
        ? join(section, best)
        : null;
  }

  /** Levenshtein distance; keys are short, so the quadratic table is fine. */
  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitute = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        cur[j] = Math.min(substitute, Math.min(prev[j] + 1, cur[j - 1] + 1));
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }
}
