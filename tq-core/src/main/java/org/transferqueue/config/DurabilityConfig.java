package org.transferqueue.config;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The journal settings shared by every role that journals (YAML section {@code durability}); which
 * roles journal is chosen per role ({@code controller.durability}, {@code storage.durability}).
 *
 * @param journalDir the base directory: each role journals into its own sub-directory ({@code
 *     controller}, {@code storage-unit-<rank>}, {@code store-node-<index>}) ({@code
 *     TQ_DURABILITY_JOURNAL_DIR})
 * @param sync {@code fsync}: every group commit is synced before its writes are acknowledged;
 *     {@code interval}: acknowledged once written to the file (a killed process loses nothing, a
 *     machine crash at most {@code sync_interval}) and synced every {@code sync_interval} ({@code
 *     TQ_DURABILITY_SYNC})
 * @param syncInterval the sync period and loss window of {@code sync: interval}
 * @param maxBytes the most journal bytes a role keeps; checkpoints compact it from half of it on
 * @param segmentBytes the size of one journal segment file
 */
public record DurabilityConfig(
    String journalDir, String sync, Duration syncInterval, long maxBytes, long segmentBytes) {

  /** Key of {@link #journalDir()}. */
  public static final String JOURNAL_DIR_PROP_NAME = "durability.journal_dir";

  /** Default of {@link #journalDir()}: relative to the working directory. */
  public static final String JOURNAL_DIR_DEFAULT = Defaults.JOURNAL_DIR;

  /** Key of {@link #sync()}. */
  public static final String SYNC_PROP_NAME = "durability.sync";

  /** Default of {@link #sync()}. */
  public static final String SYNC_DEFAULT = Defaults.DURABILITY_SYNC;

  /** The accepted values of {@link #sync()}. */
  public static final List<String> SYNC_POLICIES = List.of("fsync", "interval");

  /** Key of {@link #syncInterval()}. */
  public static final String SYNC_INTERVAL_PROP_NAME = "durability.sync_interval";

  /** Default of {@link #syncInterval()}. */
  public static final Duration SYNC_INTERVAL_DEFAULT = Defaults.DURABILITY_SYNC_INTERVAL;

  /** Key of {@link #maxBytes()}. */
  public static final String MAX_BYTES_PROP_NAME = "durability.max_bytes";

  /** Default of {@link #maxBytes()}. */
  public static final long MAX_BYTES_DEFAULT = Defaults.DURABILITY_MAX_BYTES;

  /** Key of {@link #segmentBytes()}. */
  public static final String SEGMENT_BYTES_PROP_NAME = "durability.segment_bytes";

  /** Default of {@link #segmentBytes()}. */
  public static final long SEGMENT_BYTES_DEFAULT = Defaults.DURABILITY_SEGMENT_BYTES;

  /** The smallest segment accepted (the journal's own minimum). */
  static final long MIN_SEGMENT_BYTES = 4L << 10;

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public DurabilityConfig {
    Problems p = new Problems();
    if (journalDir == null || journalDir.isBlank()) {
      p.add(JOURNAL_DIR_PROP_NAME, journalDir, "must name a directory");
    }
    if (!SYNC_POLICIES.contains(sync)) {
      p.add(SYNC_PROP_NAME, sync, "is not a sync policy (fsync or interval)");
    }
    p.positive(SYNC_INTERVAL_PROP_NAME, syncInterval);
    p.atLeast(SEGMENT_BYTES_PROP_NAME, segmentBytes, MIN_SEGMENT_BYTES);
    if (maxBytes < 2 * segmentBytes) {
      p.add(MAX_BYTES_PROP_NAME, maxBytes, "must be at least twice " + SEGMENT_BYTES_PROP_NAME);
    }
    p.throwIfAny();
  }

  /**
   * A builder holding the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Mutable builder of {@link DurabilityConfig}; not thread-safe. */
  public static final class Builder {
    private String journalDir = JOURNAL_DIR_DEFAULT;
    private String sync = SYNC_DEFAULT;
    private Duration syncInterval = SYNC_INTERVAL_DEFAULT;
    private long maxBytes = MAX_BYTES_DEFAULT;
    private long segmentBytes = SEGMENT_BYTES_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #JOURNAL_DIR_PROP_NAME}.
     *
     * @param journalDir the base directory
     * @return this builder
     */
    public Builder journalDir(String journalDir) {
      this.journalDir = journalDir;
      return this;
    }

    /**
     * Sets {@value #SYNC_PROP_NAME}.
     *
     * @param sync {@code fsync} or {@code interval}
     * @return this builder
     */
    public Builder sync(String sync) {
      this.sync = Objects.requireNonNull(sync, "sync");
      return this;
    }

    /**
     * Sets {@value #SYNC_INTERVAL_PROP_NAME}.
     *
     * @param syncInterval positive
     * @return this builder
     */
    public Builder syncInterval(Duration syncInterval) {
      this.syncInterval = Objects.requireNonNull(syncInterval, "syncInterval");
      return this;
    }

    /**
     * Sets {@value #MAX_BYTES_PROP_NAME}.
     *
     * @param maxBytes at least twice the segment size
     * @return this builder
     */
    public Builder maxBytes(long maxBytes) {
      this.maxBytes = maxBytes;
      return this;
    }

    /**
     * Sets {@value #SEGMENT_BYTES_PROP_NAME}.
     *
     * @param segmentBytes at least 4 KiB
     * @return this builder
     */
    public Builder segmentBytes(long segmentBytes) {
      this.segmentBytes = segmentBytes;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the section
     * @throws ConfigException naming each invalid key and value
     */
    public DurabilityConfig build() {
      return new DurabilityConfig(journalDir, sync, syncInterval, maxBytes, segmentBytes);
    }
  }
}
