package org.transferqueue.config;

import java.net.InetAddress;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Network settings for multi-process deployment (YAML section {@code network}): where servers bind,
 * the shared token they require, and the addresses clients and servers connect to. Embedded
 * deployments (one JVM) leave the addresses empty.
 *
 * <p><b>Where servers listen.</b> Every server role follows one rule, {@link #bindAddress}: it
 * listens on {@code bind_host} and on the port of its own configured address ({@code
 * controller_address}, {@code storage_unit_addresses[N]}, {@code store_node_addresses[N]}; port 0
 * or no address = a free port). The host part of an address is the name clients connect to; {@code
 * bind_host} is the interface the server listens on (default {@code 127.0.0.1}; {@code 0.0.0.0} for
 * every interface). A role whose address is a non-loopback IP literal while {@code bind_host} is a
 * loopback address could never be reached at that address and fails at start-up.
 *
 * <p>{@link #toString()} never shows the token.
 *
 * @param bindHost the interface every server role listens on; loopback unless told otherwise
 * @param authToken the shared token servers require and clients send; empty = none
 * @param controllerAddress where the controller listens; empty = in this process
 * @param storageUnitAddresses the SimpleStorage units in rank order (routing depends on the order);
 *     empty = units in this process
 * @param storeNodeAddresses the object-store nodes; empty = an embedded store
 * @param connectTimeout deadline of opening one connection
 * @param maxFrameBytes the longest frame accepted, checked before any allocation
 * @param sharedMemory whether servers offer and clients ask for shared-memory frame bodies with a
 *     peer on the same host (docs/PROTOCOL.md section 4.2); false keeps every byte on the socket
 * @param sharedMemoryLimitBytes the most bytes a server's shared-memory segments hold together
 *     (accounted in its allocator, so {@code memory.limit_bytes} applies too)
 * @param sharedMemorySegmentBytes the size of a server's standard segment; a larger region gets a
 *     segment of its own
 * @param sharedMemoryMinBytes frames with fewer body bytes stay on the socket
 */
public record NetworkConfig(
    String bindHost,
    Optional<String> authToken,
    Optional<HostPort> controllerAddress,
    List<HostPort> storageUnitAddresses,
    List<HostPort> storeNodeAddresses,
    Duration connectTimeout,
    long maxFrameBytes,
    boolean sharedMemory,
    long sharedMemoryLimitBytes,
    long sharedMemorySegmentBytes,
    long sharedMemoryMinBytes) {

  /** Key of {@link #bindHost()}. */
  public static final String BIND_HOST_PROP_NAME = "network.bind_host";

  /** Default of {@link #bindHost()}. */
  public static final String BIND_HOST_DEFAULT = Defaults.BIND_HOST;

  /** Key of {@link #authToken()}. */
  public static final String AUTH_TOKEN_PROP_NAME = "network.auth_token";

  /** Default of {@link #authToken()}: no token. */
  public static final Optional<String> AUTH_TOKEN_DEFAULT = Optional.empty();

  /** Key of {@link #controllerAddress()}. */
  public static final String CONTROLLER_ADDRESS_PROP_NAME = "network.controller_address";

  /** Default of {@link #controllerAddress()}: an embedded controller. */
  public static final Optional<HostPort> CONTROLLER_ADDRESS_DEFAULT = Optional.empty();

  /** Key of {@link #storageUnitAddresses()}. */
  public static final String STORAGE_UNIT_ADDRESSES_PROP_NAME = "network.storage_unit_addresses";

  /** Default of {@link #storageUnitAddresses()}. */
  public static final List<HostPort> STORAGE_UNIT_ADDRESSES_DEFAULT = List.of();

  /** Key of {@link #storeNodeAddresses()}. */
  public static final String STORE_NODE_ADDRESSES_PROP_NAME = "network.store_node_addresses";

  /** Default of {@link #storeNodeAddresses()}. */
  public static final List<HostPort> STORE_NODE_ADDRESSES_DEFAULT = List.of();

  /** Key of {@link #connectTimeout()}. */
  public static final String CONNECT_TIMEOUT_PROP_NAME = "network.connect_timeout";

  /** Default of {@link #connectTimeout()}. */
  public static final Duration CONNECT_TIMEOUT_DEFAULT = Defaults.CONNECT_TIMEOUT;

  /** Key of {@link #maxFrameBytes()}. */
  public static final String MAX_FRAME_BYTES_PROP_NAME = "network.max_frame_bytes";

  /** Default of {@link #maxFrameBytes()}. */
  public static final long MAX_FRAME_BYTES_DEFAULT = Defaults.MAX_FRAME_BYTES;

  /** Key of {@link #sharedMemory()}. */
  public static final String SHARED_MEMORY_PROP_NAME = "network.shared_memory";

  /** Default of {@link #sharedMemory()}. */
  public static final boolean SHARED_MEMORY_DEFAULT = Defaults.SHARED_MEMORY;

  /** Key of {@link #sharedMemoryLimitBytes()}. */
  public static final String SHARED_MEMORY_LIMIT_BYTES_PROP_NAME =
      "network.shared_memory_limit_bytes";

  /** Default of {@link #sharedMemoryLimitBytes()}: 2 GiB. */
  public static final long SHARED_MEMORY_LIMIT_BYTES_DEFAULT = Defaults.SHARED_MEMORY_LIMIT_BYTES;

  /** Key of {@link #sharedMemorySegmentBytes()}. */
  public static final String SHARED_MEMORY_SEGMENT_BYTES_PROP_NAME =
      "network.shared_memory_segment_bytes";

  /** Default of {@link #sharedMemorySegmentBytes()}: 64 MiB. */
  public static final long SHARED_MEMORY_SEGMENT_BYTES_DEFAULT =
      Defaults.SHARED_MEMORY_SEGMENT_BYTES;

  /** Key of {@link #sharedMemoryMinBytes()}. */
  public static final String SHARED_MEMORY_MIN_BYTES_PROP_NAME = "network.shared_memory_min_bytes";

  /** Default of {@link #sharedMemoryMinBytes()}: 64 KiB. */
  public static final long SHARED_MEMORY_MIN_BYTES_DEFAULT = Defaults.SHARED_MEMORY_MIN_BYTES;

  /**
   * Validates every component.
   *
   * @throws ConfigException naming each invalid key and value
   */
  public NetworkConfig {
    Problems p = new Problems();
    if (bindHost == null || !HostPort.isValidHost(bindHost)) {
      p.add(BIND_HOST_PROP_NAME, bindHost, "is not a host name or address");
    }
    if (authToken == null) {
      p.notNull(AUTH_TOKEN_PROP_NAME, null);
    } else if (authToken.isPresent() && !isToken(authToken.get())) {
      p.add(
          new ConfigProblem(
              AUTH_TOKEN_PROP_NAME,
              ConfigProblem.REDACTED,
              "must be non-empty and contain no white space or control characters"));
    }
    p.notNull(CONTROLLER_ADDRESS_PROP_NAME, controllerAddress);
    storageUnitAddresses = addresses(p, STORAGE_UNIT_ADDRESSES_PROP_NAME, storageUnitAddresses);
    storeNodeAddresses = addresses(p, STORE_NODE_ADDRESSES_PROP_NAME, storeNodeAddresses);
    p.positive(CONNECT_TIMEOUT_PROP_NAME, connectTimeout);
    p.atLeast(MAX_FRAME_BYTES_PROP_NAME, maxFrameBytes, MIN_FRAME_BYTES);
    p.atLeast(SHARED_MEMORY_LIMIT_BYTES_PROP_NAME, sharedMemoryLimitBytes, 0);
    p.atLeast(
        SHARED_MEMORY_SEGMENT_BYTES_PROP_NAME,
        sharedMemorySegmentBytes,
        Defaults.MIN_SHARED_MEMORY_SEGMENT_BYTES);
    if (sharedMemorySegmentBytes % 4096 != 0) {
      p.add(
          SHARED_MEMORY_SEGMENT_BYTES_PROP_NAME,
          String.valueOf(sharedMemorySegmentBytes),
          "must be a multiple of 4096");
    }
    p.atLeast(SHARED_MEMORY_MIN_BYTES_PROP_NAME, sharedMemoryMinBytes, 0);
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

  /**
   * Where a server role listens: {@link #bindHost()} on the port of the role's configured address,
   * or an ephemeral port (0) when the role has no address. The same rule holds for the controller,
   * every storage unit and every store node.
   *
   * @param address the role's configured address (what clients connect to), or empty
   * @param key the key the address comes from, e.g. {@code network.storage_unit_addresses[1]}
   * @return the address to bind
   * @throws ConfigException naming {@code network.bind_host} and {@code key} when {@code bind_host}
   *     is a loopback address and the role's address a non-loopback IP literal: clients connecting
   *     to that address would never reach the server
   */
  public HostPort bindAddress(Optional<HostPort> address, String key) {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(key, "key");
    if (address.isPresent() && isLoopback(bindHost) && isNonLoopbackLiteral(address.get().host())) {
      Problems p = new Problems();
      p.add(
          key,
          address.get().toString(),
          "is not reachable: the role listens on "
              + BIND_HOST_PROP_NAME
              + "="
              + bindHost
              + " (loopback only); set "
              + BIND_HOST_PROP_NAME
              + " to this host's address or 0.0.0.0");
      p.throwIfAny();
    }
    return new HostPort(bindHost, address.map(HostPort::port).orElse(0));
  }

  private static boolean isLoopback(String host) {
    if (host.equalsIgnoreCase("localhost")) {
      return true;
    }
    InetAddress literal = literal(host);
    return literal != null && literal.isLoopbackAddress();
  }

  private static boolean isNonLoopbackLiteral(String host) {
    InetAddress literal = literal(host);
    return literal != null && !literal.isLoopbackAddress() && !literal.isAnyLocalAddress();
  }

  /** The address of an IP literal, without a name lookup; null for a host name. */
  private static InetAddress literal(String host) {
    try {
      return InetAddress.ofLiteral(host);
    } catch (IllegalArgumentException e) {
      return null; // a host name, not a literal: nothing to compare without a lookup
    }
  }

  /** The smallest accepted {@code max_frame_bytes}: room for a header and its metadata. */
  public static final long MIN_FRAME_BYTES = Defaults.MIN_FRAME_BYTES;

  private static boolean isToken(String token) {
    return !token.isEmpty()
        && token
            .codePoints()
            .noneMatch(c -> Character.isWhitespace(c) || Character.isISOControl(c));
  }

  private static List<HostPort> addresses(Problems p, String key, List<HostPort> list) {
    if (list == null || list.stream().anyMatch(Objects::isNull)) {
      p.add(key, null, "must be a list of host:port without null entries");
      return list == null ? null : list.stream().filter(Objects::nonNull).toList();
    }
    Set<HostPort> seen = new HashSet<>();
    for (HostPort a : list) {
      if (!seen.add(a)) {
        p.add(key, HostPort.render(list), "lists " + a + " twice");
      }
    }
    return List.copyOf(list);
  }

  @Override
  public String toString() {
    return "NetworkConfig[bindHost="
        + bindHost
        + ", authToken="
        + (authToken.isPresent() ? ConfigProblem.REDACTED : "none")
        + ", controllerAddress="
        + controllerAddress.map(HostPort::toString).orElse("embedded")
        + ", storageUnitAddresses="
        + storageUnitAddresses
        + ", storeNodeAddresses="
        + storeNodeAddresses
        + ", connectTimeout="
        + connectTimeout
        + ", maxFrameBytes="
        + maxFrameBytes
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

  /** Mutable builder of {@link NetworkConfig}; not thread-safe. */
  public static final class Builder {
    private String bindHost = BIND_HOST_DEFAULT;
    private String authToken = null;
    private HostPort controllerAddress = null;
    private List<HostPort> storageUnitAddresses = STORAGE_UNIT_ADDRESSES_DEFAULT;
    private List<HostPort> storeNodeAddresses = STORE_NODE_ADDRESSES_DEFAULT;
    private Duration connectTimeout = CONNECT_TIMEOUT_DEFAULT;
    private long maxFrameBytes = MAX_FRAME_BYTES_DEFAULT;
    private boolean sharedMemory = SHARED_MEMORY_DEFAULT;
    private long sharedMemoryLimitBytes = SHARED_MEMORY_LIMIT_BYTES_DEFAULT;
    private long sharedMemorySegmentBytes = SHARED_MEMORY_SEGMENT_BYTES_DEFAULT;
    private long sharedMemoryMinBytes = SHARED_MEMORY_MIN_BYTES_DEFAULT;

    Builder() {}

    /**
     * Sets {@value #BIND_HOST_PROP_NAME}.
     *
     * @param bindHost a host name or address
     * @return this builder
     */
    public Builder bindHost(String bindHost) {
      this.bindHost = Objects.requireNonNull(bindHost, "bindHost");
      return this;
    }

    /**
     * Sets {@value #AUTH_TOKEN_PROP_NAME}.
     *
     * @param authToken a token without white space, or null for none
     * @return this builder
     */
    public Builder authToken(String authToken) {
      this.authToken = authToken;
      return this;
    }

    /**
     * Sets {@value #CONTROLLER_ADDRESS_PROP_NAME}.
     *
     * @param controllerAddress the address, or null for an embedded controller
     * @return this builder
     */
    public Builder controllerAddress(HostPort controllerAddress) {
      this.controllerAddress = controllerAddress;
      return this;
    }

    /**
     * Sets {@value #STORAGE_UNIT_ADDRESSES_PROP_NAME}.
     *
     * @param storageUnitAddresses one address per unit, in rank order
     * @return this builder
     */
    public Builder storageUnitAddresses(List<HostPort> storageUnitAddresses) {
      this.storageUnitAddresses =
          Objects.requireNonNull(storageUnitAddresses, "storageUnitAddresses");
      return this;
    }

    /**
     * Sets {@value #STORE_NODE_ADDRESSES_PROP_NAME}.
     *
     * @param storeNodeAddresses the node addresses
     * @return this builder
     */
    public Builder storeNodeAddresses(List<HostPort> storeNodeAddresses) {
      this.storeNodeAddresses = Objects.requireNonNull(storeNodeAddresses, "storeNodeAddresses");
      return this;
    }

    /**
     * Sets {@value #CONNECT_TIMEOUT_PROP_NAME}.
     *
     * @param connectTimeout positive
     * @return this builder
     */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = Objects.requireNonNull(connectTimeout, "connectTimeout");
      return this;
    }

    /**
     * Sets {@value #MAX_FRAME_BYTES_PROP_NAME}.
     *
     * @param maxFrameBytes at least 4096
     * @return this builder
     */
    public Builder maxFrameBytes(long maxFrameBytes) {
      this.maxFrameBytes = maxFrameBytes;
      return this;
    }

    /**
     * Sets {@value #SHARED_MEMORY_PROP_NAME}.
     *
     * @param sharedMemory whether same-host peers move bodies through shared memory
     * @return this builder
     */
    public Builder sharedMemory(boolean sharedMemory) {
      this.sharedMemory = sharedMemory;
      return this;
    }

    /**
     * Sets {@value #SHARED_MEMORY_LIMIT_BYTES_PROP_NAME}.
     *
     * @param sharedMemoryLimitBytes zero or more
     * @return this builder
     */
    public Builder sharedMemoryLimitBytes(long sharedMemoryLimitBytes) {
      this.sharedMemoryLimitBytes = sharedMemoryLimitBytes;
      return this;
    }

    /**
     * Sets {@value #SHARED_MEMORY_SEGMENT_BYTES_PROP_NAME}.
     *
     * @param sharedMemorySegmentBytes a multiple of 4096, at least 8192
     * @return this builder
     */
    public Builder sharedMemorySegmentBytes(long sharedMemorySegmentBytes) {
      this.sharedMemorySegmentBytes = sharedMemorySegmentBytes;
      return this;
    }

    /**
     * Sets {@value #SHARED_MEMORY_MIN_BYTES_PROP_NAME}.
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
     * @throws ConfigException naming each invalid key and value
     */
    public NetworkConfig build() {
      return new NetworkConfig(
          bindHost,
          Optional.ofNullable(authToken),
          Optional.ofNullable(controllerAddress),
          storageUnitAddresses,
          storeNodeAddresses,
          connectTimeout,
          maxFrameBytes,
          sharedMemory,
          sharedMemoryLimitBytes,
          sharedMemorySegmentBytes,
          sharedMemoryMinBytes);
    }
  }
}
