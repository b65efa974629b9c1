package org.transferqueue.config;

import java.time.Duration;
import java.util.Objects;

/**
 * The write-ahead journals of the roles that keep one (YAML section {@code durability}; a role
 * journals when its own {@code durability} key says {@code journal}, such as {@code
 * storage.durability}). Each role journals into its own sub-directory of {@code journal_dir}:
 * {@code controller}, {@code storage-unit-<rank>}, {@code store-node-<index>}.
 *
 * @param journalDir the base directory ({@code TQ_JOURNAL_DIR})
 * @param sync {@code fsync} (one fsync per group commit before acknowledging) or {@code interval}
 *     (acknowledge once written to the file, fsync every {@code sync_interval}) ({@code
 *     TQ_DURABILITY_SYNC})
 * @param syncInterval the loss window of {@code interval} on an OS crash or power loss ({@code
 *     TQ_DURABILITY_SYNC_INTERVAL})
 * @param maxBytes the most bytes of journal files per role; compaction starts at half of it and
 *     writes fail with {@code CAPACITY_EXCEEDED} when it is full ({@code TQ_DURABILITY_MAX_BYTES})
 * @param segmentBytes the size of one journal file ({@code TQ_DURABILITY_SEGMENT_BYTES})
 */
public record DurabilityConfig(
    String journalDir, String sync, Duration syncInterval, long maxBytes, long segmentBytes) {

  /** Key of {@link #journalDir()}. */
  public static final String JOURNAL_DIR_PROP_NAME = "durability.journal_dir";

  /** Key of {@link #sync()}. */
  public static final String SYNC_PROP_NAME = "durability.sync";

  /** Key of {@link #syncInterval()}. */
  public static final String SYNC_INTERVAL_PROP_NAME = "durability.sync_interval";

  /** Key of {@link #maxBytes()}. */
  public static final String MAX_BYTES_PROP_NAME = "durability.max_bytes";

  /** Key of {@link #segmentBytes()}. */
  public static final String SEGMENT_BYTES_PROP_NAME = "durability.segment_bytes";

  /** The smallest {@link #segmentBytes()}: 4 KiB. */
  public static final long MIN_SEGMENT_BYTES = 4L << 10;

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public DurabilityConfig {
    Problems p = new Problems();
    p.notBlank(JOURNAL_DIR_PROP_NAME, journalDir);
    if (!"fsync".equals(sync) && !"interval".equals(sync)) {
      p.add(SYNC_PROP_NAME, sync, "is not a sync policy (fsync or interval)");
    }
    p.positive(SYNC_INTERVAL_PROP_NAME, syncInterval);
    p.atLeast(SEGMENT_BYTES_PROP_NAME, segmentBytes, MIN_SEGMENT_BYTES);
    if (maxBytes < 2 * segmentBytes) {
      p.add(
          MAX_BYTES_PROP_NAME,
          maxBytes,
          "is less than twice " + SEGMENT_BYTES_PROP_NAME + " (" + segmentBytes + ")");
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
    private String journalDir = Defaults.JOURNAL_DIR;
    private String sync = Defaults.DURABILITY_SYNC;
    private Duration syncInterval = Defaults.DURABILITY_SYNC_INTERVAL;
    private long maxBytes = Defaults.DURABILITY_MAX_BYTES;
    private long segmentBytes = Defaults.DURABILITY_SEGMENT_BYTES;

    Builder() {}

    /**
     * Sets {@value #JOURNAL_DIR_PROP_NAME}.
     *
     * @param journalDir a directory path
     * @return this builder
     */
    public Builder journalDir(String journalDir) {
      this.journalDir = Objects.requireNonNull(journalDir, "journalDir");
      return this;
    }

    /**
     * Sets {@value #SYNC_PROP_NAME}.
     *
     * @param sync {@code fsync} or {@code interval}
     * @return this builder
     */
    public Builder sync(String sync) {
      this.sync = Objects.requireNonNull(sync, "sync").strip();
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
     * @return the configuration
     * @throws ConfigException naming each invalid key and value
     */
    public DurabilityConfig build() {
      return new DurabilityConfig(journalDir, sync, syncInterval, maxBytes, segmentBytes);
    }
  }
}
