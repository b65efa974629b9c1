package org.transferqueue.sampler;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.ConfigProblem;
import org.transferqueue.config.ControllerConfig;

/**
 * Creates the sampler that {@code controller.sampler} names, with the arguments of {@code
 * controller.sampler_args}, so that every deployment (the embedded system and {@code tq
 * controller}) can configure a sampler that takes parameters.
 *
 * <p>Arguments use the parameter names of upstream's constructors:
 *
 * <table>
 *   <caption>Built-in samplers and their arguments</caption>
 *   <tr><th>sampler</th><th>arguments (default)</th></tr>
 *   <tr><td>{@code SequentialSampler}</td><td>none</td></tr>
 *   <tr><td>{@code GRPOGroupNSampler}</td><td>{@code n_samples_per_prompt} (1), {@code group_tag}
 *       ({@value GrpoGroupNSampler#GROUP_TAG})</td></tr>
 *   <tr><td>{@code RankAwareSampler}</td><td>none (its rank and batch index come with each
 *       fetch)</td></tr>
 *   <tr><td>{@code SeqlenBalancedSampler}</td><td>{@code n_samples_per_prompt} (1), {@code dp_size}
 *       (1)</td></tr>
 * </table>
 *
 * <p>A class name is instantiated through a public constructor taking a {@code Map<String, Object>}
 * of the arguments when it has one, else through its public no-argument constructor (then no
 * argument may be given). Every mistake is {@code INVALID_CONFIGURATION} naming the full key and
 * value, before anything starts. Stateless and thread-safe.
 */
public final class Samplers {
  private record BuiltIn(List<String> arguments, Function<Arguments, Sampler> factory) {}

  private static final Map<String, BuiltIn> BUILT_IN = builtIn();

  private Samplers() {}

  private static Map<String, BuiltIn> builtIn() {
    Map<String, BuiltIn> m = new LinkedHashMap<>();
    m.put("SequentialSampler", new BuiltIn(List.of(), a -> new SequentialSampler()));
    BuiltIn grpo =
        new BuiltIn(
            List.of("n_samples_per_prompt", "group_tag"),
            a ->
                new GrpoGroupNSampler(
                    a.positiveInt("n_samples_per_prompt", 1),
                    a.text("group_tag", GrpoGroupNSampler.GROUP_TAG)));
    m.put("GRPOGroupNSampler", grpo);
    m.put("GrpoGroupNSampler", grpo);
    m.put("RankAwareSampler", new BuiltIn(List.of(), a -> new RankAwareSampler()));
    m.put(
        "SeqlenBalancedSampler",
        new BuiltIn(
            List.of("n_samples_per_prompt", "dp_size"),
            a ->
                new SeqlenBalancedSampler(
                    a.positiveInt("n_samples_per_prompt", 1), a.positiveInt("dp_size", 1))));
    return Map.copyOf(m);
  }

  /**
   * The sampler of a configuration's {@code controller} section.
   *
   * @param config the section
   * @return a new sampler
   * @throws TqException {@code INVALID_CONFIGURATION} naming the key and value that cannot be used
   */
  public static Sampler create(ControllerConfig config) {
    Objects.requireNonNull(config, "config");
    return create(config.sampler(), config.samplerArgs());
  }

  /**
   * A sampler by name with arguments.
   *
   * @param name a built-in sampler name or a fully qualified class name
   * @param args the arguments by upstream parameter name; empty for the defaults
   * @return a new sampler
   * @throws TqException {@code INVALID_CONFIGURATION} for an unknown name, an argument the sampler
   *     does not take, or a value of the wrong type or out of range, naming the full key and value
   */
  public static Sampler create(String name, Map<String, ?> args) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(args, "args");
    BuiltIn builtIn = BUILT_IN.get(name);
    if (builtIn != null) {
      for (String given : args.keySet()) {
        if (!builtIn.arguments().contains(given)) {
          throw invalid(
              given,
              args.get(given),
              "is not an argument of "
                  + name
                  + (builtIn.arguments().isEmpty()
                      ? " (it takes none)"
                      : " (it takes " + String.join(", ", builtIn.arguments()) + ")"));
        }
      }
      try {
        return builtIn.factory().apply(new Arguments(args));
      } catch (TqException e) {
        if (e.code() == ErrorCode.INVALID_CONFIGURATION) {
          throw e;
        }
        throw new TqException(
            ErrorCode.INVALID_CONFIGURATION,
            ControllerConfig.SAMPLER_ARGS_PROP_NAME + ": " + e.getMessage(),
            e);
      }
    }
    return instantiate(name, args);
  }

  /** The built-in names, for messages. */
  static List<String> builtInNames() {
    return ControllerConfig.BUILT_IN_SAMPLERS;
  }

  private static Sampler instantiate(String name, Map<String, ?> args) {
    Class<?> type;
    try {
      type = Class.forName(name);
    } catch (ClassNotFoundException e) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          ControllerConfig.SAMPLER_PROP_NAME
              + ": Could not find sampler '"
              + name
              + "' (built in: "
              + builtInNames()
              + ")",
          e);
    }
    if (!Sampler.class.isAssignableFrom(type)) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          ControllerConfig.SAMPLER_PROP_NAME
              + ": class "
              + name
              + " does not implement "
              + Sampler.class.getName());
    }
    try {
      Constructor<?> withArguments = mapConstructor(type);
      if (withArguments != null) {
        return (Sampler) withArguments.newInstance(Map.copyOf(args));
      }
      if (!args.isEmpty()) {
        String first = args.keySet().iterator().next();
        throw invalid(
            first,
            args.get(first),
            "cannot be given to "
                + name
                + ": it has no public constructor taking a Map of arguments");
      }
      return (Sampler) type.getConstructor().newInstance();
    } catch (NoSuchMethodException | InstantiationException | IllegalAccessException e) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          ControllerConfig.SAMPLER_PROP_NAME
              + ": cannot instantiate '"
              + name
              + "' with a public no-argument constructor or one taking a Map of arguments",
          e);
    } catch (InvocationTargetException e) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          ControllerConfig.SAMPLER_PROP_NAME
              + ": the constructor of '"
              + name
              + "' failed: "
              + e.getCause(),
          e.getCause());
    }
  }

  private static Constructor<?> mapConstructor(Class<?> type) {
    try {
      return type.getConstructor(Map.class);
    } catch (NoSuchMethodException e) {
      return null;
    }
  }

  private static TqException invalid(String argument, Object value, String reason) {
    return new TqException(
        ErrorCode.INVALID_CONFIGURATION,
        ControllerConfig.SAMPLER_ARGS_PROP_NAME
            + "."
            + argument
            + ": "
            + ConfigProblem.render(value)
            + " "
            + reason);
  }

  /** Typed access to the arguments of a built-in sampler. */
  private record Arguments(Map<String, ?> values) {
    int positiveInt(String name, int defaultValue) {
      Object value = values.get(name);
      if (value == null) {
        return defaultValue;
      }
      if (!(value instanceof Long || value instanceof Integer)) {
        throw invalid(name, value, "is not an integer");
      }
      long n = ((Number) value).longValue();
      if (n < 1 || n > Integer.MAX_VALUE) {
        throw invalid(name, value, "must be in [1, " + Integer.MAX_VALUE + "]");
      }
      return (int) n;
    }

    String text(String name, String defaultValue) {
      Object value = values.get(name);
      if (value == null) {
        return defaultValue;
      }
      if (!(value instanceof String s) || s.isEmpty()) {
        throw invalid(name, value, "is not a non-empty string");
      }
      return s;
    }
  }
}
