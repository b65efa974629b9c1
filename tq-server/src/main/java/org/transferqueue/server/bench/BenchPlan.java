package org.transferqueue.server.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.MooncakeStoreConfig;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.SimpleStorageConfig;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;

/**
 * What one {@code tq bench} run measures: the sizes, the backend x mode matrix, the iterations, and
 * the configuration every case starts from.
 *
 * @param sizes the data sizes, in run order
 * @param complex mixed field kinds (tensors, jagged tensors, strings) instead of float32 tensors
 * @param backends the backends
 * @param modes the modes, each able to run in this build
 * @param skippedModes modes asked for (through {@code all}) that this build cannot run
 * @param iterations measured iterations per case, at least 1
 * @param warmup how many iterations each case runs before the measured ones: their timings are
 *     recorded but kept out of the means (the first touch of the system's memory and the
 *     compilation of its code paths land there)
 * @param seed seeds the generated values
 * @param configYaml the YAML every case's configuration starts from; empty for the defaults
 * @param configSource the file {@code configYaml} came from, or null
 * @param environment the environment variables applied over the YAML
 * @param command the command line that asked for this plan, recorded with the results
 */
public record BenchPlan(
    List<BenchSize> sizes,
    boolean complex,
    List<BenchBackend> backends,
    List<BenchMode> modes,
    List<BenchMode> skippedModes,
    int iterations,
    WarmupPolicy warmup,
    long seed,
    String configYaml,
    String configSource,
    Map<String, String> environment,
    String command) {

  /**
   * Validates the components.
   *
   * @throws TqException {@code INVALID_ARGUMENT} for an empty list or fewer than one iteration;
   *     {@code UNSUPPORTED_OPERATION} for a mode this build cannot run
   */
  public BenchPlan {
    sizes = List.copyOf(sizes);
    backends = List.copyOf(backends);
    modes = List.copyOf(modes);
    skippedModes = List.copyOf(skippedModes);
    Objects.requireNonNull(warmup, "warmup");
    Objects.requireNonNull(configYaml, "configYaml");
    environment = Map.copyOf(environment);
    Objects.requireNonNull(command, "command");
    if (sizes.isEmpty() || backends.isEmpty() || modes.isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "a plan needs at least one size, backend and mode: sizes="
              + sizes
              + ", backends="
              + backends
              + ", modes="
              + modes);
    }
    for (BenchMode mode : modes) {
      if (mode.missing().isPresent()) {
        throw new TqException(ErrorCode.UNSUPPORTED_OPERATION, mode.missing().get());
      }
    }
    if (iterations < 1) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "iterations=" + iterations + " must be at least 1");
    }
  }

  /**
   * The configuration of one case: the plan's YAML and environment, then the backend, a
   * SimpleStorage capacity of {@code batch x iterations} samples (as upstream's perftest) and a
   * MooncakeStore segment that holds one batch.
   *
   * @param backend the case's backend
   * @param size the case's size
   * @param bytes the bytes of one batch
   * @return the validated configuration
   */
  public TqConfig caseConfig(BenchBackend backend, BenchSize size, long bytes) {
    return caseConfig(backend, size, bytes, Map.of());
  }

  /**
   * The configuration of one case in {@code mode}: {@link #caseConfig(BenchBackend, BenchSize,
   * long)}, and for the modes whose servers are child processes {@code network.shared_memory} on
   * for {@link BenchMode#SHM} and off for {@link BenchMode#LOOPBACK}, whatever the YAML says (the
   * mode decides how the bytes travel; the other shared-memory keys come from the YAML).
   *
   * @param backend the case's backend
   * @param mode the case's mode
   * @param size the case's size
   * @param bytes the bytes of one batch
   * @return the validated configuration
   */
  public TqConfig caseConfig(BenchBackend backend, BenchMode mode, BenchSize size, long bytes) {
    return mode.servedByChildProcesses()
        ? caseConfig(
            backend,
            size,
            bytes,
            Map.of(NetworkConfig.SHARED_MEMORY_PROP_NAME, mode == BenchMode.SHM))
        : caseConfig(backend, size, bytes);
  }

  private TqConfig caseConfig(
      BenchBackend backend, BenchSize size, long bytes, Map<String, Object> modeOverrides) {
    Map<String, Object> overrides = new LinkedHashMap<>();
    overrides.put("backend.storage_backend", backend.configName());
    overrides.put(
        SimpleStorageConfig.TOTAL_STORAGE_SIZE_PROP_NAME, (long) size.batch() * iterations);
    long segment = MemoryCheck.mooncakeSegmentBytes(bytes);
    overrides.put(MooncakeStoreConfig.GLOBAL_SEGMENT_SIZE_PROP_NAME, segment);
    overrides.put(
        MooncakeStoreConfig.LOCAL_BUFFER_SIZE_PROP_NAME,
        Math.max(MooncakeStoreConfig.LOCAL_BUFFER_SIZE_DEFAULT, segment));
    overrides.putAll(modeOverrides);
    return TqConfigs.parse(configYaml, configSource, environment, overrides);
  }
}
