package org.transferqueue.config;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Controller settings (YAML section {@code controller}).
 *
 * <p>With {@code polling_mode: false} (the upstream default) a fetch that cannot be satisfied waits
 * up to {@code get_metadata_timeout}, re-checking every {@code get_metadata_check_interval}; with
 * {@code true} it returns an empty batch at once.
 *
 * @param sampler a built-in sampler name ({@code SequentialSampler}, {@code GRPOGroupNSampler},
 *     {@code RankAwareSampler}, {@code SeqlenBalancedSampler}) or a fully qualified class name
 * @param pollingMode true: an unsatisfiable fetch returns an empty batch at once; false: it waits
 * @param preallocSampleNum global indexes reserved for a new partition ({@code
 *     TQ_PRE_ALLOC_SAMPLE_NUM})
 * @param getMetadataTimeout total wait of a blocking fetch ({@code
 *     TQ_CONTROLLER_GET_METADATA_TIMEOUT})
 * @param getMetadataCheckInterval the longest a blocking fetch waits before it asks the sampler
 *     again although nothing changed ({@code TQ_CONTROLLER_GET_METADATA_CHECK_INTERVAL}); every
 *     change of the partition wakes it at once, the interval serves samplers whose answer depends
 *     on time
 * @param samplerArgs the arguments of the sampler ({@code controller.sampler_args}): parameter
 *     names to booleans, integers ({@code Long}), numbers ({@code Double}) or strings, for example
 *     {@code n_samples_per_prompt} of {@code GRPOGroupNSampler}; which names a sampler takes is
 *     checked when the controller starts
 * @param durability {@code none}, or {@code journal}: the controller journals every acknowledged
 *     change under {@code <durability.journal_dir>/controller} and recovers from it when it starts
 *     ({@code TQ_CONTROLLER_DURABILITY}; docs/RELIABILITY.md)
 */
public record ControllerConfig(
    String sampler,
    boolean pollingMode,
    int preallocSampleNum,
    Duration getMetadataTimeout,
    Duration getMetadataCheckInterval,
    Map<String, Object> samplerArgs,
    Durability durability) {

  /** Key of {@link #sampler()}. */
  public static final String SAMPLER_PROP_NAME = "controller.sampler";

  /** Default of {@link #sampler()}. */
  public static final String SAMPLER_DEFAULT = "SequentialSampler";

  /** Key of {@link #pollingMode()}. */
  public static final String POLLING_MODE_PROP_NAME = "controller.polling_mode";

  /** Default of {@link #pollingMode()}. */
  public static final boolean POLLING_MODE_DEFAULT = Defaults.POLLING_MODE;

  /** Key of {@link #preallocSampleNum()}. */
  public static final String PREALLOC_SAMPLE_NUM_PROP_NAME = "controller.prealloc_sample_num";

  /** Default of {@link #preallocSampleNum()}. */
  public static final int PREALLOC_SAMPLE_NUM_DEFAULT = Defaults.PREALLOC_SAMPLE_NUM;

  /** Key of {@link #getMetadataTimeout()}. */
  public static final String GET_METADATA_TIMEOUT_PROP_NAME = "controller.get_metadata_timeout";

  /** Default of {@link #getMetadataTimeout()}. */
  public static final Duration GET_METADATA_TIMEOUT_DEFAULT = Defaults.GET_METADATA_TIMEOUT;

  /** Key of {@link #getMetadataCheckInterval()}. */
  public static final String GET_METADATA_CHECK_INTERVAL_PROP_NAME =
      "controller.get_metadata_check_interval";

  /** Default of {@link #getMetadataCheckInterval()}. */
  public static final Duration GET_METADATA_CHECK_INTERVAL_DEFAULT =
      Defaults.GET_METADATA_CHECK_INTERVAL;

  /** Key of {@link #samplerArgs()}. */
  public static final String SAMPLER_ARGS_PROP_NAME = "controller.sampler_args";

  /** Default of {@link #samplerArgs()}: none. */
  public static final Map<String, Object> SAMPLER_ARGS_DEFAULT = Map.of();

  /** Key of the controller's durability mode. */
  public static final String DURABILITY_PROP_NAME = "controller.durability";

  /** Default durability: no journal. */
  public static final Durability DURABILITY_DEFAULT = Defaults.CONTROLLER_DURABILITY;

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public ControllerConfig {
    Problems p = new Problems();
    if (sampler == null || !isSamplerName(sampler)) {
      p.add(
          SAMPLER_PROP_NAME,
          sampler,
          "is not a sampler (one of "
              + String.join(", ", BUILT_IN_SAMPLERS)
              + ", or a class name)");
    }
    p.atLeast(PREALLOC_SAMPLE_NUM_PROP_NAME, preallocSampleNum, 1);
    p.positive(GET_METADATA_TIMEOUT_PROP_NAME, getMetadataTimeout);
    p.positive(GET_METADATA_CHECK_INTERVAL_PROP_NAME, getMetadataCheckInterval);
    if (samplerArgs == null) {
      p.notNull(SAMPLER_ARGS_PROP_NAME, null);
    } else {
      samplerArgs = checkSamplerArgs(p, samplerArgs);
    }
    p.notNull(DURABILITY_PROP_NAME, durability);
    p.throwIfAny();
  }

  /** Checks names and value types; integers become {@code Long}. */
  private static Map<String, Object> checkSamplerArgs(Problems p, Map<String, Object> args) {
    Map<String, Object> copy = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : args.entrySet()) {
      String name = e.getKey();
      Object value = e.getValue();
      String key = SAMPLER_ARGS_PROP_NAME + "." + name;
      if (name == null || name.isBlank()) {
        p.add(SAMPLER_ARGS_PROP_NAME, args, "has an empty argument name");
        continue;
      }
      switch (value) {
        case Integer i -> copy.put(name, (long) i);
        case Long l -> copy.put(name, l);
        case Double d -> copy.put(name, d);
        case Boolean b -> copy.put(name, b);
        case String t -> copy.put(name, t);
        case null -> p.add(key, null, "must be set (a boolean, an integer, a number or a string)");
        default -> p.add(key, value, "is not a boolean, an integer, a number or a string");
      }
    }
    return Collections.unmodifiableMap(copy);
  }

  /**
   * A builder holding the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** The upstream names of the built-in samplers. */
  public static final List<String> BUILT_IN_SAMPLERS =
      List.of(
          "SequentialSampler", "GRPOGroupNSampler", "RankAwareSampler", "SeqlenBalancedSampler");

  private static final Pattern CLASS_NAME =
      Pattern.compile("[\\p{L}_$][\\p{L}\\p{N}_$]*(\\.[\\p{L}_$][\\p{L}\\p{N}_$]*)+");

  private static boolean isSamplerName(String name) {
    return BUILT_IN_SAMPLERS.contains(name) || CLASS_NAME.matcher(name).matches();
  }

  /**
   * Tells whether {@link #sampler()} names a built-in sampler rather than a class.
   *
   * @return true for one of {@link #BUILT_IN_SAMPLERS}
   */
  public boolean builtInSampler() {
    return BUILT_IN_SAMPLERS.contains(sampler);
  }

  /** Mutable builder of {@link ControllerConfig}; not thread-safe. */
  public static final class Builder {
    private String sampler = SAMPLER_DEFAULT;
    private boolean pollingMode = POLLING_MODE_DEFAULT;
    private int preallocSampleNum = PREALLOC_SAMPLE_NUM_DEFAULT;
    private Duration getMetadataTimeout = GET_METADATA_TIMEOUT_DEFAULT;
    private Duration getMetadataCheckInterval = GET_METADATA_CHECK_INTERVAL_DEFAULT;
    private Map<String, Object> samplerArgs = SAMPLER_ARGS_DEFAULT;
    private Durability durability = DURABILITY_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #DURABILITY_PROP_NAME}.
     *
     * @param durability none or journal
     * @return this builder
     */
    public Builder durability(Durability durability) {
      this.durability = Objects.requireNonNull(durability, "durability");
      return this;
    }

    /**
     * Sets {@value #SAMPLER_PROP_NAME}.
     *
     * @param sampler a built-in sampler name or a class name
     * @return this builder
     */
    public Builder sampler(String sampler) {
      this.sampler = Objects.requireNonNull(sampler, "sampler");
      return this;
    }

    /**
     * Sets {@value #POLLING_MODE_PROP_NAME}.
     *
     * @param pollingMode true: an unsatisfiable fetch returns an empty batch at once; false: it
     *     waits
     * @return this builder
     */
    public Builder pollingMode(boolean pollingMode) {
      this.pollingMode = pollingMode;
      return this;
    }

    /**
     * Sets {@value #PREALLOC_SAMPLE_NUM_PROP_NAME}.
     *
     * @param preallocSampleNum at least 1
     * @return this builder
     */
    public Builder preallocSampleNum(int preallocSampleNum) {
      this.preallocSampleNum = preallocSampleNum;
      return this;
    }

    /**
     * Sets {@value #GET_METADATA_TIMEOUT_PROP_NAME}.
     *
     * @param getMetadataTimeout positive
     * @return this builder
     */
    public Builder getMetadataTimeout(Duration getMetadataTimeout) {
      this.getMetadataTimeout = Objects.requireNonNull(getMetadataTimeout, "getMetadataTimeout");
      return this;
    }

    /**
     * Sets {@value #GET_METADATA_CHECK_INTERVAL_PROP_NAME}.
     *
     * @param getMetadataCheckInterval positive
     * @return this builder
     */
    public Builder getMetadataCheckInterval(Duration getMetadataCheckInterval) {
      this.getMetadataCheckInterval =
          Objects.requireNonNull(getMetadataCheckInterval, "getMetadataCheckInterval");
      return this;
    }

    /**
     * Sets {@value #SAMPLER_ARGS_PROP_NAME}.
     *
     * @param samplerArgs parameter names to booleans, integers, numbers or strings; copied
     * @return this builder
     */
    public Builder samplerArgs(Map<String, ?> samplerArgs) {
      Objects.requireNonNull(samplerArgs, "samplerArgs");
      this.samplerArgs = new LinkedHashMap<>(samplerArgs);
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public ControllerConfig build() {
      return new ControllerConfig(
          sampler,
          pollingMode,
          preallocSampleNum,
          getMetadataTimeout,
          getMetadataCheckInterval,
          samplerArgs,
          durability);
    }
  }
}
