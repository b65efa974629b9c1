package org.transferqueue.sampler;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The client-supplied part of a sampling call: data-parallel rank, batch index and free-form
 * sampler options.
 *
 * <p>Partition id and task name are deliberately not part of it: the controller supplies them in
 * the {@link SamplingRequest}. Immutable; {@code options} is an unmodifiable shallow copy whose
 * values are read-only by contract.
 *
 * @param dpRank the caller's data-parallel group id, at least 0, or null when not given
 * @param batchIndex the caller's running batch counter, or null when not given
 * @param options sampler-specific options (for example {@code priority_scores}); never null
 */
public record SamplingConfig(Integer dpRank, Integer batchIndex, Map<String, Object> options) {
  /** The configuration key of the data-parallel rank. */
  public static final String DP_RANK_KEY = "dp_rank";

  /** The configuration key of the batch index. */
  public static final String BATCH_INDEX_KEY = "batch_index";

  /** The configuration key of the task name, ignored: the controller supplies the task. */
  public static final String TASK_NAME_KEY = "task_name";

  /** The configuration key of the partition id, ignored: the controller supplies the partition. */
  public static final String PARTITION_ID_KEY = "partition_id";

  /** No rank, no batch index, no options. */
  public static final SamplingConfig NONE = new SamplingConfig(null, null, Map.of());

  /** Copies the options. */
  public SamplingConfig {
    options =
        options == null || options.isEmpty()
            ? Map.of()
            : Collections.unmodifiableMap(new LinkedHashMap<>(options));
  }

  /**
   * A configuration with a rank and a batch index and no options.
   *
   * @param dpRank the data-parallel rank, or null
   * @param batchIndex the batch index, or null
   * @return the configuration
   */
  public static SamplingConfig of(Integer dpRank, Integer batchIndex) {
    return new SamplingConfig(dpRank, batchIndex, Map.of());
  }

  /**
   * Parses a client's raw sampling configuration.
   *
   * <p>{@code dp_rank} and {@code batch_index} become typed values; {@code task_name} and {@code
   * partition_id} are dropped (the controller's own values are authoritative); every other entry is
   * kept as an option.
   *
   * @param raw the raw map; null is the empty configuration
   * @return the configuration
   * @throws TqException {@link ErrorCode#INVALID_ARGUMENT} when {@code dp_rank} or {@code
   *     batch_index} is present but not an integral number in {@code int} range
   */
  public static SamplingConfig fromMap(Map<String, ?> raw) {
    if (raw == null || raw.isEmpty()) {
      return NONE;
    }
    LinkedHashMap<String, Object> options = new LinkedHashMap<>(raw);
    Integer dpRank = toInt(DP_RANK_KEY, options.remove(DP_RANK_KEY));
    Integer batchIndex = toInt(BATCH_INDEX_KEY, options.remove(BATCH_INDEX_KEY));
    options.remove(TASK_NAME_KEY);
    options.remove(PARTITION_ID_KEY);
    return new SamplingConfig(dpRank, batchIndex, options);
  }

  private static Integer toInt(String key, Object value) {
    return switch (value) {
      case null -> null;
      case Integer i -> i;
      case Long l when l == l.intValue() -> l.intValue();
      case Short s -> s.intValue();
      case Byte b -> b.intValue();
      default ->
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "sampling config '" + key + "' must be an integer, got " + value);
    };
  }
}
