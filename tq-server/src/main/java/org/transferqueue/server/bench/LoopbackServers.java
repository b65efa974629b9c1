package org.transferqueue.server.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.NetworkConfig;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;

/**
 * The servers of one loopback case, each a {@code tq} child process on 127.0.0.1 as {@code tq up}
 * starts them: the controller and two storage units for SimpleStorage, the controller and two store
 * nodes for MooncakeStore, on free ports. They share a configuration file written from the case's
 * configuration (backend, SimpleStorage and MooncakeStore sizes, memory limits, addresses, and
 * whether and how the servers and the client use shared memory); other keys keep their defaults,
 * and the children read the {@code TQ_*} environment as every role does. Closing stops every child.
 * Also used by {@code tq stress}, whose chaos mode {@link #kill}s and {@link #restart}s children on
 * their addresses. Not thread-safe: one thread starts, kills, restarts and closes.
 */
public final class LoopbackServers implements AutoCloseable {
  private static final int SERVERS = 2;

  private final List<LoopbackProcess> children = new ArrayList<>();
  private final List<String> roles = new ArrayList<>();
  private final List<Integer> ranks = new ArrayList<>();
  private final TqConfig clientConfig;

  private LoopbackServers(TqConfig clientConfig) {
    this.clientConfig = clientConfig;
  }

  /**
   * Starts the servers of a case and waits until each listens.
   *
   * @param tq the command that runs {@code tq} in a child JVM
   * @param backend the backend of the case
   * @param caseConfig the case's configuration
   * @param dir where the configuration file and the children's error files go
   * @return the running servers
   * @throws org.transferqueue.TqException {@code CONNECTION_FAILED} when a child does not start;
   *     the ones already started are stopped
   */
  public static LoopbackServers start(
      List<String> tq, BenchBackend backend, TqConfig caseConfig, Path dir) {
    return start(tq, backend, caseConfig, "", dir);
  }

  /**
   * Starts the servers of a case with further configuration and waits until each listens.
   *
   * @param tq the command that runs {@code tq} in a child JVM
   * @param backend the backend of the case
   * @param caseConfig the case's configuration
   * @param extraYaml top-level YAML sections appended to the shared configuration file (e.g. the
   *     durability settings of {@code tq stress --chaos}), or ""
   * @param dir where the configuration file and the children's error files go
   * @return the running servers
   * @throws org.transferqueue.TqException {@code CONNECTION_FAILED} when a child does not start;
   *     the ones already started are stopped
   */
  public static LoopbackServers start(
      List<String> tq, BenchBackend backend, TqConfig caseConfig, String extraYaml, Path dir) {
    List<Integer> ports = freePorts(1 + SERVERS);
    String yaml = yaml(backend, caseConfig, ports) + extraYaml;
    Path file = dir.resolve("loopback-" + backend.configName() + ".yaml");
    try {
      Files.writeString(file, yaml, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    LoopbackServers servers =
        new LoopbackServers(TqConfigs.parse(yaml, file.toString(), Map.of(), Map.of()));
    try {
      servers.startRole(
          tq, dir, "controller", 0, List.of("controller", "--config", file.toString()));
      for (int i = 0; i < SERVERS; i++) {
        List<String> role =
            backend == BenchBackend.SIMPLE_STORAGE
                ? List.of(
                    "storage-unit", "--config", file.toString(), "--unit", Integer.toString(i))
                : List.of("store-node", "--config", file.toString(), "--node", Integer.toString(i));
        servers.startRole(tq, dir, role.getFirst() + " " + i, i, role);
      }
      return servers;
    } catch (RuntimeException e) {
      servers.close();
      throw e;
    }
  }

  /** The process ids of the children, for CPU accounting. */
  List<Long> pids() {
    return children.stream().map(LoopbackProcess::pid).toList();
  }

  /**
   * The configuration a client connects with: the addresses of these servers.
   *
   * @return the configuration
   */
  public TqConfig clientConfig() {
    return clientConfig;
  }

  /**
   * The peak resident memory ({@code VmHWM} of {@code /proc/<pid>/status}) of every child so far.
   *
   * @return bytes by child name ({@code controller}, {@code storage-unit 0}, ..), -1 where unknown
   */
  public Map<String, Long> peakRssBytes() {
    Map<String, Long> out = new LinkedHashMap<>();
    for (LoopbackProcess child : children) {
      out.put(child.name(), child.peakRssBytes());
    }
    return out;
  }

  private void startRole(List<String> tq, Path dir, String name, int rank, List<String> arguments) {
    List<String> command = new ArrayList<>(tq);
    command.addAll(arguments);
    children.add(
        LoopbackProcess.start(name, command, dir.resolve(name.replace(' ', '-') + ".err")));
    roles.add(arguments.getFirst());
    ranks.add(rank);
  }

  /**
   * How many children there are: the controller first, then the storage servers in rank order.
   *
   * @return the count
   */
  public int size() {
    return children.size();
  }

  /**
   * The {@code tq} subcommand a child runs.
   *
   * @param child 0 to {@link #size()} - 1
   * @return {@code controller}, {@code storage-unit} or {@code store-node}
   */
  public String role(int child) {
    return roles.get(child);
  }

  /**
   * The rank of a storage server among its kind (0 for the controller).
   *
   * @param child 0 to {@link #size()} - 1
   * @return the rank
   */
  public int rank(int child) {
    return ranks.get(child);
  }

  /**
   * A child's name in messages and reports.
   *
   * @param child 0 to {@link #size()} - 1
   * @return e.g. {@code storage-unit 1}
   */
  public String name(int child) {
    return children.get(child).name();
  }

  /**
   * The address a child listens on, the same after a restart.
   *
   * @param child 0 to {@link #size()} - 1
   * @return the address
   */
  public HostPort address(int child) {
    return children.get(child).address();
  }

  /**
   * Whether a child is running.
   *
   * @param child 0 to {@link #size()} - 1
   * @return false once it exited (killed and not restarted yet)
   */
  public boolean isAlive(int child) {
    return children.get(child).isAlive();
  }

  /**
   * Kills a child with SIGKILL and waits until it has exited.
   *
   * @param child 0 to {@link #size()} - 1
   * @throws org.transferqueue.TqException {@code ILLEGAL_STATE} when it does not exit in time
   */
  public void kill(int child) {
    children.get(child).kill();
  }

  /**
   * Starts a killed child again with the same command line (address, configuration, journal
   * directory) and waits until it listens.
   *
   * @param child 0 to {@link #size()} - 1
   * @throws org.transferqueue.TqException {@code CONNECTION_FAILED} when it does not start
   */
  public void restart(int child) {
    children.set(child, children.get(child).restart());
  }

  /** The shared configuration file: the case's sizes and limits plus the servers' addresses. */
  static String yaml(BenchBackend backend, TqConfig config, List<Integer> ports) {
    StringBuilder y = new StringBuilder();
    y.append("backend:\n");
    y.append("  storage_backend: ").append(backend.configName()).append('\n');
    y.append("  SimpleStorage:\n");
    y.append("    num_data_storage_units: ").append(SERVERS).append('\n');
    config
        .backend()
        .simpleStorage()
        .totalStorageSize()
        .ifPresent(n -> y.append("    total_storage_size: ").append(n).append('\n'));
    y.append("  MooncakeStore:\n");
    y.append("    global_segment_size: ")
        .append(config.backend().mooncakeStore().globalSegmentSize())
        .append('\n');
    y.append("    local_buffer_size: ")
        .append(config.backend().mooncakeStore().localBufferSize())
        .append('\n');
    y.append("memory:\n");
    config.memory().limitBytes().ifPresent(n -> y.append("  limit_bytes: ").append(n).append('\n'));
    config
        .memory()
        .storageUnitLimitBytes()
        .ifPresent(n -> y.append("  storage_unit_limit_bytes: ").append(n).append('\n'));
    y.append("network:\n");
    y.append("  bind_host: 127.0.0.1\n");
    y.append("  controller_address: ").append(new HostPort("127.0.0.1", ports.get(0))).append('\n');
    y.append(
        backend == BenchBackend.SIMPLE_STORAGE
            ? "  storage_unit_addresses:\n"
            : "  store_node_addresses:\n");
    for (int i = 1; i < ports.size(); i++) {
      y.append("    - ").append(new HostPort("127.0.0.1", ports.get(i))).append('\n');
    }
    y.append("  max_frame_bytes: ").append(config.network().maxFrameBytes()).append('\n');
    NetworkConfig network = config.network();
    y.append("  shared_memory: ").append(network.sharedMemory()).append('\n');
    y.append("  shared_memory_limit_bytes: ").append(network.sharedMemoryLimitBytes()).append('\n');
    y.append("  shared_memory_segment_bytes: ")
        .append(network.sharedMemorySegmentBytes())
        .append('\n');
    y.append("  shared_memory_min_bytes: ").append(network.sharedMemoryMinBytes()).append('\n');
    return y.toString();
  }

  /** Ports free on 127.0.0.1 now: each bound to an ephemeral port, all held, then released. */
  private static List<Integer> freePorts(int count) {
    List<ServerSocketChannel> held = new ArrayList<>();
    try {
      List<Integer> ports = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        ServerSocketChannel channel = ServerSocketChannel.open();
        held.add(channel);
        channel.bind(new InetSocketAddress("127.0.0.1", 0));
        ports.add(((InetSocketAddress) channel.getLocalAddress()).getPort());
      }
      return List.copyOf(ports);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      for (ServerSocketChannel channel : held) {
        try {
          channel.close();
        } catch (IOException e) {
          // Closing an unconnected listening channel has nothing to lose.
        }
      }
    }
  }

  @Override
  public void close() {
    // Storage servers first, the controller last, as tq up's reverse start order.
    for (int i = children.size() - 1; i >= 0; i--) {
      children.get(i).close();
    }
    children.clear();
  }
}
