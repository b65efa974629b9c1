package org.transferqueue.transport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.config.Defaults;
import org.transferqueue.config.HostPort;

/**
 * Settings of {@link TransportServer} and {@link TransportClient}: limits checked before any
 * allocation, deadlines, pool sizes and the optional shared token.
 *
 * <p>Built with {@link #builder()}; the system layer maps the {@code network} section of the
 * configuration (and the deadline of each role's calls) onto it ({@code
 * org.transferqueue.system.ConfigMapper}). Transport knows no roles. {@link #toString()} never
 * shows the token.
 *
 * @param bindHost the interface servers listen on; loopback unless told otherwise
 * @param bindPort the port servers listen on; 0 = an ephemeral port
 * @param authToken the shared token: servers require it in the connection's HELLO, clients send it
 * @param maxFrameBytes the longest frame accepted or sent (header, metadata, padding and bodies)
 * @param maxMetadataBytes the longest metadata section accepted or sent
 * @param maxBodySegments the most body segments one frame may carry
 * @param maxBodySegmentBytes the longest single body segment
 * @param connectTimeout the deadline of opening a connection and its HELLO exchange
 * @param defaultCallTimeout the deadline of a call that does not name its own
 * @param connectionsPerPeer how many long-lived connections a client opens to one address at first;
 *     the pool grows (up to 16 times) while every connection is busy
 * @param maxConcurrentRequestsPerConnection how many requests of one connection a server handles at
 *     once; the connection's reader waits (back-pressure) when the limit is reached
 * @param connectionMemoryLimitBytes the limit of the child allocator that holds the request bodies
 *     of one server connection
 * @param shutdownGracePeriod how long a closing server lets in-flight handlers finish
 * @param sharedMemory whether a server offers and a client asks for shared-memory bodies (same host
 *     only, negotiated at HELLO); false keeps every frame on the socket exactly as without it
 * @param sharedMemoryLimitBytes the most bytes a server's shared-memory segments hold together
 * @param sharedMemorySegmentBytes the size of a server's standard shared-memory segment
 * @param sharedMemoryMinBytes the smallest total body length a side sends through shared memory
 */
public record TransportConfig(
    String bindHost,
    int bindPort,
    Optional<String> authToken,
    long maxFrameBytes,
    long maxMetadataBytes,
    int maxBodySegments,
    long maxBodySegmentBytes,
    Duration connectTimeout,
    Duration defaultCallTimeout,
    int connectionsPerPeer,
    int maxConcurrentRequestsPerConnection,
    long connectionMemoryLimitBytes,
    Duration shutdownGracePeriod,
    boolean sharedMemory,
    long sharedMemoryLimitBytes,
    long sharedMemorySegmentBytes,
    long sharedMemoryMinBytes) {

  /** Default of {@link #maxMetadataBytes()}: 16 MiB. */
  public static final long MAX_METADATA_BYTES_DEFAULT = 16L << 20;

  /** Default of {@link #maxBodySegments()}. */
  public static final int MAX_BODY_SEGMENTS_DEFAULT = 65_536;

  /** Default of {@link #defaultCallTimeout()}. */
  public static final Duration DEFAULT_CALL_TIMEOUT_DEFAULT = Duration.ofSeconds(60);

  /** Default of {@link #connectionsPerPeer()}. */
  public static final int CONNECTIONS_PER_PEER_DEFAULT = 2;

  /** Default of {@link #maxConcurrentRequestsPerConnection()}. */
  public static final int MAX_CONCURRENT_REQUESTS_PER_CONNECTION_DEFAULT = 256;

  /** Default of {@link #connectionMemoryLimitBytes()}: 4 GiB. */
  public static final long CONNECTION_MEMORY_LIMIT_BYTES_DEFAULT = 4L << 30;

  /** Default of {@link #shutdownGracePeriod()}. */
  public static final Duration SHUTDOWN_GRACE_PERIOD_DEFAULT = Duration.ofSeconds(5);

  /** The smallest accepted {@link #maxMetadataBytes()}. */
  public static final long MIN_METADATA_BYTES = 1024;

  /**
   * Validates every component.
   *
   * @throws TqException with {@code INVALID_CONFIGURATION} naming each invalid component and value
   */
  public TransportConfig {
    List<String> problems = new ArrayList<>();
    if (bindHost == null || !HostPort.isValidHost(bindHost)) {
      problems.add("bindHost=" + bindHost + " is not a host name or address");
    }
    if (bindPort < 0 || bindPort > HostPort.MAX_PORT) {
      problems.add("bindPort=" + bindPort + " is not in [0, 65535]");
    }
    if (authToken == null) {
      problems.add("authToken must not be null (use Optional.empty())");
    } else if (authToken.isPresent() && authToken.get().isEmpty()) {
      problems.add("authToken must not be empty");
    }
    if (maxFrameBytes < Defaults.MIN_FRAME_BYTES) {
      problems.add("maxFrameBytes=" + maxFrameBytes + " < min=" + Defaults.MIN_FRAME_BYTES);
    }
    if (maxMetadataBytes < MIN_METADATA_BYTES || maxMetadataBytes > 0xFFFF_FFFFL) {
      problems.add(
          "maxMetadataBytes=" + maxMetadataBytes + " not in [" + MIN_METADATA_BYTES + ", 2^32-1]");
    }
    if (maxBodySegments < 1) {
      problems.add("maxBodySegments=" + maxBodySegments + " < 1");
    }
    if (maxBodySegmentBytes < 0) {
      problems.add("maxBodySegmentBytes=" + maxBodySegmentBytes + " < 0");
    }
    requirePositive(problems, "connectTimeout", connectTimeout);
    requirePositive(problems, "defaultCallTimeout", defaultCallTimeout);
    if (connectionsPerPeer < 1) {
      problems.add("connectionsPerPeer=" + connectionsPerPeer + " < 1");
    }
    if (maxConcurrentRequestsPerConnection < 1) {
      problems.add(
          "maxConcurrentRequestsPerConnection=" + maxConcurrentRequestsPerConnection + " < 1");
    }
    if (connectionMemoryLimitBytes < 0) {
      problems.add("connectionMemoryLimitBytes=" + connectionMemoryLimitBytes + " < 0");
    }
    if (shutdownGracePeriod == null || shutdownGracePeriod.isNegative()) {
      problems.add("shutdownGracePeriod=" + shutdownGracePeriod + " must be zero or positive");
    }
    if (sharedMemoryLimitBytes < 0) {
      problems.add("sharedMemoryLimitBytes=" + sharedMemoryLimitBytes + " < 0");
    }
    if (sharedMemorySegmentBytes < Defaults.MIN_SHARED_MEMORY_SEGMENT_BYTES
        || sharedMemorySegmentBytes % 4096 != 0) {
      problems.add(
          "sharedMemorySegmentBytes="
              + sharedMemorySegmentBytes
              + " must be a multiple of 4096 and at least "
              + Defaults.MIN_SHARED_MEMORY_SEGMENT_BYTES);
    }
    if (sharedMemoryMinBytes < 0) {
      problems.add("sharedMemoryMinBytes=" + sharedMemoryMinBytes + " < 0");
    }
    if (!problems.isEmpty()) {
      throw new TqException(
          ErrorCode.INVALID_CONFIGURATION,
          "invalid transport configuration: " + String.join("; ", problems));
    }
  }

  private static void requirePositive(List<String> problems, String name, Duration value) {
    if (value == null || value.isNegative() || value.isZero()) {
      problems.add(name + "=" + value + " must be positive");
    }
  }

  /**
   * A builder holding the defaults: loopback, an ephemeral port, no token, the limits {@code
   * config/tq.yaml} documents ({@link Defaults}).
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  @Override
  public String toString() {
    return "TransportConfig[bindHost="
        + bindHost
        + ", bindPort="
        + bindPort
        + ", authToken="
        + (authToken.isPresent() ? "<redacted>" : "none")
        + ", maxFrameBytes="
        + maxFrameBytes
        + ", maxMetadataBytes="
        + maxMetadataBytes
        + ", maxBodySegments="
        + maxBodySegments
        + ", maxBodySegmentBytes="
        + maxBodySegmentBytes
        + ", connectTimeout="
        + connectTimeout
        + ", defaultCallTimeout="
        + defaultCallTimeout
        + ", connectionsPerPeer="
        + connectionsPerPeer
        + ", maxConcurrentRequestsPerConnection="
        + maxConcurrentRequestsPerConnection
        + ", connectionMemoryLimitBytes="
        + connectionMemoryLimitBytes
        + ", shutdownGracePeriod="
        + shutdownGracePeriod
        + ", sharedMemory="
        + sharedMemory
        + ", sharedMemoryLimitBytes="
        + sharedMemoryLimitBytes
        + ", sharedMemorySegmentBytes="
        + sharedMemorySegmentBytes
        + ", sharedMemoryMinBytes="
        + sharedMemoryMinBytes
        + "]";
  }

  /** Mutable builder of {@link TransportConfig}; not thread-safe. */
  public static final class Builder {
    private String bindHost = Defaults.BIND_HOST;
    private int bindPort = 0;
    private String authToken = null;
    private long maxFrameBytes = Defaults.MAX_FRAME_BYTES;
    private long maxMetadataBytes = MAX_METADATA_BYTES_DEFAULT;
    private int maxBodySegments = MAX_BODY_SEGMENTS_DEFAULT;
    private long maxBodySegmentBytes = Defaults.MAX_FRAME_BYTES;
    private Duration connectTimeout = Defaults.CONNECT_TIMEOUT;
    private Duration defaultCallTimeout = DEFAULT_CALL_TIMEOUT_DEFAULT;
    private int connectionsPerPeer = CONNECTIONS_PER_PEER_DEFAULT;
    private int maxConcurrentRequestsPerConnection = MAX_CONCURRENT_REQUESTS_PER_CONNECTION_DEFAULT;
    private long connectionMemoryLimitBytes = CONNECTION_MEMORY_LIMIT_BYTES_DEFAULT;
    private Duration shutdownGracePeriod = SHUTDOWN_GRACE_PERIOD_DEFAULT;
    private boolean sharedMemory = Defaults.SHARED_MEMORY;
    private long sharedMemoryLimitBytes = Defaults.SHARED_MEMORY_LIMIT_BYTES;
    private long sharedMemorySegmentBytes = Defaults.SHARED_MEMORY_SEGMENT_BYTES;
    private long sharedMemoryMinBytes = Defaults.SHARED_MEMORY_MIN_BYTES;

    Builder() {}

    /**
     * Sets {@link TransportConfig#bindHost()}.
     *
     * @param bindHost a host name or address
     * @return this builder
     */
    public Builder bindHost(String bindHost) {
      this.bindHost = bindHost;
      return this;
    }

    /**
     * Sets {@link TransportConfig#bindPort()}.
     *
     * @param bindPort 0 for an ephemeral port, or 1-65535
     * @return this builder
     */
    public Builder bindPort(int bindPort) {
      this.bindPort = bindPort;
      return this;
    }

    /**
     * Sets {@link TransportConfig#authToken()}.
     *
     * @param authToken the shared token, or null for none
     * @return this builder
     */
    public Builder authToken(String authToken) {
      this.authToken = authToken;
      return this;
    }

    /**
     * Sets {@link TransportConfig#maxFrameBytes()}.
     *
     * @param maxFrameBytes at least {@link Defaults#MIN_FRAME_BYTES}
     * @return this builder
     */
    public Builder maxFrameBytes(long maxFrameBytes) {
      this.maxFrameBytes = maxFrameBytes;
      return this;
    }

    /**
     * Sets {@link TransportConfig#maxMetadataBytes()}.
     *
     * @param maxMetadataBytes at least {@link #MIN_METADATA_BYTES}
     * @return this builder
     */
    public Builder maxMetadataBytes(long maxMetadataBytes) {
      this.maxMetadataBytes = maxMetadataBytes;
      return this;
    }

    /**
     * Sets {@link TransportConfig#maxBodySegments()}.
     *
     * @param maxBodySegments at least 1
     * @return this builder
     */
    public Builder maxBodySegments(int maxBodySegments) {
      this.maxBodySegments = maxBodySegments;
      return this;
    }

    /**
     * Sets {@link TransportConfig#maxBodySegmentBytes()}.
     *
     * @param maxBodySegmentBytes zero or more
     * @return this builder
     */
    public Builder maxBodySegmentBytes(long maxBodySegmentBytes) {
      this.maxBodySegmentBytes = maxBodySegmentBytes;
      return this;
    }

    /**
     * Sets {@link TransportConfig#connectTimeout()}.
     *
     * @param connectTimeout positive
     * @return this builder
     */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
      return this;
    }

    /**
     * Sets {@link TransportConfig#defaultCallTimeout()}.
     *
     * @param defaultCallTimeout positive
     * @return this builder
     */
    public Builder defaultCallTimeout(Duration defaultCallTimeout) {
      this.defaultCallTimeout = defaultCallTimeout;
      return this;
    }

    /**
     * Sets {@link TransportConfig#connectionsPerPeer()}.
     *
     * @param connectionsPerPeer at least 1
     * @return this builder
     */
    public Builder connectionsPerPeer(int connectionsPerPeer) {
      this.connectionsPerPeer = connectionsPerPeer;
      return this;
    }

    /**
     * Sets {@link TransportConfig#maxConcurrentRequestsPerConnection()}.
     *
     * @param maxConcurrentRequestsPerConnection at least 1
     * @return this builder
     */
    public Builder maxConcurrentRequestsPerConnection(int maxConcurrentRequestsPerConnection) {
      this.maxConcurrentRequestsPerConnection = maxConcurrentRequestsPerConnection;
      return this;
    }

    /**
     * Sets {@link TransportConfig#connectionMemoryLimitBytes()}.
     *
     * @param connectionMemoryLimitBytes zero or more
     * @return this builder
     */
    public Builder connectionMemoryLimitBytes(long connectionMemoryLimitBytes) {
      this.connectionMemoryLimitBytes = connectionMemoryLimitBytes;
      return this;
    }

    /**
     * Sets {@link TransportConfig#shutdownGracePeriod()}.
     *
     * @param shutdownGracePeriod zero or positive
     * @return this builder
     */
    public Builder shutdownGracePeriod(Duration shutdownGracePeriod) {
      this.shutdownGracePeriod = shutdownGracePeriod;
      return this;
    }

    /**
     * Sets {@link TransportConfig#sharedMemory()}.
     *
     * @param sharedMemory whether to offer (server) and ask for (client) shared-memory bodies
     * @return this builder
     */
    public Builder sharedMemory(boolean sharedMemory) {
      this.sharedMemory = sharedMemory;
      return this;
    }

    /**
     * Sets {@link TransportConfig#sharedMemoryLimitBytes()}.
     *
     * @param sharedMemoryLimitBytes zero or more
     * @return this builder
     */
    public Builder sharedMemoryLimitBytes(long sharedMemoryLimitBytes) {
      this.sharedMemoryLimitBytes = sharedMemoryLimitBytes;
      return this;
    }

    /**
     * Sets {@link TransportConfig#sharedMemorySegmentBytes()}.
     *
     * @param sharedMemorySegmentBytes a multiple of 4096, at least {@link
     *     Defaults#MIN_SHARED_MEMORY_SEGMENT_BYTES}
     * @return this builder
     */
    public Builder sharedMemorySegmentBytes(long sharedMemorySegmentBytes) {
      this.sharedMemorySegmentBytes = sharedMemorySegmentBytes;
      return this;
    }

    /**
     * Sets {@link TransportConfig#sharedMemoryMinBytes()}.
     *
     * @param sharedMemoryMinBytes zero or more
     * @return this builder
     */
    public Builder sharedMemoryMinBytes(long sharedMemoryMinBytes) {
      this.sharedMemoryMinBytes = sharedMemoryMinBytes;
      return this;
    }

    /**
     * Validates and builds.
     *
     * @return the configuration
     * @throws TqException with {@code INVALID_CONFIGURATION} naming each invalid value
     */
    public TransportConfig build() {
      return new TransportConfig(
          bindHost,
          bindPort,
          Optional.ofNullable(authToken),
          maxFrameBytes,
          maxMetadataBytes,
          maxBodySegments,
          maxBodySegmentBytes,
          connectTimeout,
          defaultCallTimeout,
          connectionsPerPeer,
          maxConcurrentRequestsPerConnection,
          connectionMemoryLimitBytes,
          shutdownGracePeriod,
          sharedMemory,
          sharedMemoryLimitBytes,
          sharedMemorySegmentBytes,
          sharedMemoryMinBytes);
    }
  }
}
