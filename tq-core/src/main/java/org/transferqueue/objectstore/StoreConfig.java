package org.transferqueue.objectstore;

import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.Defaults;

/**
 * What a client contributes and uses when it is set up, as Mooncake's {@code setup} arguments.
 *
 * @param localHostname the client's segment name ({@code "host"} or {@code "host:port"}), returned
 *     by {@link ObjectStore#hostname()}
 * @param globalSegmentSize bytes of memory this client contributes to hold objects
 * @param localBufferSize bytes of the client's staging memory: the most that copy-path reads hold
 *     at once, and the largest object a copy-path write accepts
 */
public record StoreConfig(String localHostname, long globalSegmentSize, long localBufferSize) {
  /** Smallest segment Mooncake accepts: 1 KiB. */
  public static final long MIN_SEGMENT_BYTES = Defaults.MIN_SEGMENT_BYTES;

  /** Largest segment Mooncake accepts: 1 TiB. */
  public static final long MAX_SEGMENT_BYTES = Defaults.MAX_SEGMENT_BYTES;

  /**
   * Default {@link #localHostname()}; also the name of a client whose {@code
   * backend.MooncakeStore.local_hostname} is {@code ""} (unset).
   */
  public static final String LOCAL_HOSTNAME_DEFAULT = "localhost";

  /** Default {@link #globalSegmentSize()}: 4 GiB, as {@code config/tq.yaml} and upstream. */
  public static final long GLOBAL_SEGMENT_SIZE_DEFAULT = Defaults.GLOBAL_SEGMENT_SIZE;

  /** Default {@link #localBufferSize()}: 1 GiB, as {@code config/tq.yaml} and upstream. */
  public static final long LOCAL_BUFFER_SIZE_DEFAULT = Defaults.LOCAL_BUFFER_SIZE;

  /**
   * Validates the fields.
   *
   * @throws TqException with {@code INVALID_CONFIGURATION} naming the bad value
   */
  public StoreConfig {
    Objects.requireNonNull(localHostname, "localHostname");
    if (localHostname.isBlank()) {
      throw invalid("localHostname is blank");
    }
    if (globalSegmentSize != 0
        && (globalSegmentSize < MIN_SEGMENT_BYTES || globalSegmentSize > MAX_SEGMENT_BYTES)) {
      throw invalid(
          "globalSegmentSize="
              + globalSegmentSize
              + " outside [0 or "
              + MIN_SEGMENT_BYTES
              + ", "
              + MAX_SEGMENT_BYTES
              + "]");
    }
    if (localBufferSize < 0 || localBufferSize > MAX_SEGMENT_BYTES) {
      throw invalid(
          "localBufferSize=" + localBufferSize + " outside [0, " + MAX_SEGMENT_BYTES + "]");
    }
  }

  private static TqException invalid(String message) {
    return new TqException(ErrorCode.INVALID_CONFIGURATION, message);
  }

  /**
   * Starts a builder with the defaults.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link StoreConfig}; {@link #build()} validates. */
  public static final class Builder {
    private String localHostname = LOCAL_HOSTNAME_DEFAULT;
    private long globalSegmentSize = GLOBAL_SEGMENT_SIZE_DEFAULT;
    private long localBufferSize = LOCAL_BUFFER_SIZE_DEFAULT;

    private Builder() {}

    /**
     * Sets the segment name.
     *
     * @param localHostname {@code "host"} or {@code "host:port"}
     * @return this builder
     */
    public Builder localHostname(String localHostname) {
      this.localHostname = localHostname;
      return this;
    }

    /**
     * Sets the memory contributed to hold objects.
     *
     * @param globalSegmentSize 0 (a pure requester) or 1 KiB to 1 TiB
     * @return this builder
     */
    public Builder globalSegmentSize(long globalSegmentSize) {
      this.globalSegmentSize = globalSegmentSize;
      return this;
    }

    /**
     * Sets the staging memory for copy paths.
     *
     * @param localBufferSize 0 to 1 TiB
     * @return this builder
     */
    public Builder localBufferSize(long localBufferSize) {
      this.localBufferSize = localBufferSize;
      return this;
    }

    /**
     * Creates the config.
     *
     * @return the config
     * @throws TqException with {@code INVALID_CONFIGURATION} naming a bad value
     */
    public StoreConfig build() {
      return new StoreConfig(localHostname, globalSegmentSize, localBufferSize);
    }
  }
}
