package org.transferqueue.journal;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.Defaults;

/**
 * Where and how one role journals.
 *
 * <pre>{@code
 * JournalSettings settings =
 *     JournalSettings.builder(Path.of("/var/lib/tq/storage-unit-0"))
 *         .sync(SyncPolicy.INTERVAL)
 *         .syncInterval(Duration.ofMillis(10))
 *         .build();
 * }</pre>
 *
 * @param directory the role's own journal directory (created when absent)
 * @param sync when appends are forced to disk
 * @param syncInterval the longest time written records stay unforced under {@link
 *     SyncPolicy#INTERVAL} (ignored under {@link SyncPolicy#FSYNC})
 * @param maxBytes the most bytes all segment files together may hold; an append beyond it fails
 *     with {@link ErrorCode#CAPACITY_EXCEEDED}
 * @param segmentBytes the size at which the writer starts a new segment file (a record larger than
 *     this gets a segment of its own)
 */
public record JournalSettings(
    Path directory, SyncPolicy sync, Duration syncInterval, long maxBytes, long segmentBytes) {

  /** The smallest accepted {@link #segmentBytes()}: 4 KiB. */
  public static final long MIN_SEGMENT_BYTES = 4L << 10;

  /**
   * Validates every value.
   *
   * @throws TqException {@link ErrorCode#INVALID_CONFIGURATION} naming the first bad value
   */
  public JournalSettings {
    Objects.requireNonNull(directory, "directory");
    Objects.requireNonNull(sync, "sync");
    Objects.requireNonNull(syncInterval, "syncInterval");
    if (syncInterval.isNegative() || syncInterval.isZero()) {
      throw invalid("durability.sync_interval must be positive, got " + syncInterval);
    }
    if (segmentBytes < MIN_SEGMENT_BYTES) {
      throw invalid(
          "durability.segment_bytes must be at least "
              + MIN_SEGMENT_BYTES
              + ", got "
              + segmentBytes);
    }
    if (maxBytes < 2 * segmentBytes) {
      throw invalid(
          "durability.max_bytes must be at least twice durability.segment_bytes ("
              + segmentBytes
              + "), got "
              + maxBytes);
    }
  }

  /**
   * A builder with the defaults of {@code config/tq.yaml}.
   *
   * @param directory the role's journal directory
   * @return the builder
   */
  public static Builder builder(Path directory) {
    return new Builder(directory);
  }

  /**
   * The same settings for another directory (each role of a deployment journals into its own).
   *
   * @param roleDirectory the directory
   * @return a copy with that directory
   */
  public JournalSettings withDirectory(Path roleDirectory) {
    return new JournalSettings(roleDirectory, sync, syncInterval, maxBytes, segmentBytes);
  }

  private static TqException invalid(String message) {
    return new TqException(ErrorCode.INVALID_CONFIGURATION, message);
  }

  /** Builds {@link JournalSettings}; {@link #build()} validates. */
  public static final class Builder {
    private final Path directory;
    private SyncPolicy sync = SyncPolicy.fromName(Defaults.DURABILITY_SYNC);
    private Duration syncInterval = Defaults.DURABILITY_SYNC_INTERVAL;
    private long maxBytes = Defaults.DURABILITY_MAX_BYTES;
    private long segmentBytes = Defaults.DURABILITY_SEGMENT_BYTES;

    private Builder(Path directory) {
      this.directory = directory;
    }

    /**
     * Sets the sync policy.
     *
     * @param value the policy
     * @return this builder
     */
    public Builder sync(SyncPolicy value) {
      this.sync = value;
      return this;
    }

    /**
     * Sets the sync interval of {@link SyncPolicy#INTERVAL}.
     *
     * @param value a positive duration
     * @return this builder
     */
    public Builder syncInterval(Duration value) {
      this.syncInterval = value;
      return this;
    }

    /**
     * Sets the bound on all segment files together.
     *
     * @param value bytes, at least twice the segment size
     * @return this builder
     */
    public Builder maxBytes(long value) {
      this.maxBytes = value;
      return this;
    }

    /**
     * Sets the segment file size.
     *
     * @param value bytes, at least {@link #MIN_SEGMENT_BYTES}
     * @return this builder
     */
    public Builder segmentBytes(long value) {
      this.segmentBytes = value;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the settings
     * @throws TqException {@link ErrorCode#INVALID_CONFIGURATION} naming a bad value
     */
    public JournalSettings build() {
      return new JournalSettings(directory, sync, syncInterval, maxBytes, segmentBytes);
    }
  }
}
