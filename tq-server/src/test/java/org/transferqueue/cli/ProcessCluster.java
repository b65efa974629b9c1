package org.transferqueue.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.config.TqConfig;
import org.transferqueue.server.config.TqConfigs;

/**
 * A whole deployment as separate JVM processes on loopback: {@code tq controller}, {@code tq
 * storage-unit} x units and {@code tq store-node} x nodes, on free ports chosen up front so that a
 * killed role can be restarted on its own address. One configuration file per backend names every
 * address ({@link #config(StorageBackend)}); client processes and in-JVM clients load it.
 */
final class ProcessCluster implements AutoCloseable {
  private final Path dir;
  private final boolean sharedMemory;
  private final HostPort controllerAddress;
  private final List<HostPort> unitAddresses = new ArrayList<>();
  private final List<HostPort> nodeAddresses = new ArrayList<>();
  private final Path simpleConfig;
  private final Path mooncakeConfig;
  private RoleProcess controller;
  private final List<RoleProcess> units = new ArrayList<>();
  private final List<RoleProcess> nodes = new ArrayList<>();
  private final List<RoleProcess> others = new ArrayList<>();

  /**
   * Writes the configuration files and starts every role with shared memory off (every byte over
   * TCP), waiting until each listens.
   *
   * @param dir where configuration files and process output go
   * @param unitCount storage units
   * @param nodeCount store nodes
   * @param extraYaml extra top-level YAML sections (e.g. a {@code client:} block), or ""
   */
  ProcessCluster(Path dir, int unitCount, int nodeCount, String extraYaml) {
    this(dir, unitCount, nodeCount, false, extraYaml);
  }

  /**
   * Writes the configuration files and starts every role, waiting until each listens.
   *
   * @param dir where configuration files and process output go
   * @param unitCount storage units
   * @param nodeCount store nodes
   * @param sharedMemory {@code network.shared_memory} of the roles and of the clients that load the
   *     files (false: every byte over TCP)
   * @param extraYaml extra top-level YAML sections (e.g. a {@code client:} block), or ""
   */
  ProcessCluster(Path dir, int unitCount, int nodeCount, boolean sharedMemory, String extraYaml) {
    this.dir = dir;
    this.sharedMemory = sharedMemory;
    List<Integer> ports = freePorts(1 + unitCount + nodeCount);
    controllerAddress = new HostPort("127.0.0.1", ports.get(0));
    for (int i = 0; i < unitCount; i++) {
      unitAddresses.add(new HostPort("127.0.0.1", ports.get(1 + i)));
    }
    for (int i = 0; i < nodeCount; i++) {
      nodeAddresses.add(new HostPort("127.0.0.1", ports.get(1 + unitCount + i)));
    }
    simpleConfig = write("simple.yaml", yaml("SimpleStorage", unitCount, extraYaml));
    mooncakeConfig = write("mooncake.yaml", yaml("MooncakeStore", unitCount, extraYaml));
    try {
      controller = startController();
      for (int i = 0; i < unitCount; i++) {
        units.add(startUnit(i));
      }
      for (int i = 0; i < nodeCount; i++) {
        nodes.add(startNode(i));
      }
      controller.awaitListening();
      units.forEach(RoleProcess::awaitListening);
      nodes.forEach(RoleProcess::awaitListening);
    } catch (RuntimeException | Error e) {
      close();
      throw e;
    }
  }

  private String yaml(String backend, int unitCount, String extraYaml) {
    return "controller:\n"
        + "  get_metadata_timeout: 5s\n"
        + "backend:\n"
        + "  storage_backend: "
        + backend
        + "\n"
        + (unitCount == 0
            ? ""
            : "  SimpleStorage:\n    num_data_storage_units: " + unitCount + "\n")
        + "  MooncakeStore:\n"
        + "    global_segment_size: 67108864\n"
        + "    local_buffer_size: 16777216\n"
        + "memory:\n"
        + "  limit_bytes: 536870912\n"
        + "network:\n"
        + "  bind_host: 127.0.0.1\n"
        + "  controller_address: \""
        + controllerAddress
        + "\"\n"
        + "  storage_unit_addresses: "
        + list(unitAddresses)
        + "\n"
        + "  store_node_addresses: "
        + list(nodeAddresses)
        + "\n"
        + "  connect_timeout: 2s\n"
        + "  shared_memory: "
        + sharedMemory
        + "\n"
        + extraYaml;
  }

  private static String list(List<HostPort> addresses) {
    return addresses.stream().map(a -> "\"" + a + "\"").collect(Collectors.joining(", ", "[", "]"));
  }

  private Path write(String name, String text) {
    try {
      Files.createDirectories(dir);
      return Files.writeString(dir.resolve(name), text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Free loopback ports, all held open until every one is chosen so none repeats. */
  private static List<Integer> freePorts(int count) {
    List<ServerSocket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        socket.setReuseAddress(true);
        sockets.add(socket);
      }
      return sockets.stream().map(ServerSocket::getLocalPort).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      for (ServerSocket socket : sockets) {
        try {
          socket.close();
        } catch (IOException e) {
          // A port we could not close is still ours to use; nothing to do.
        }
      }
    }
  }

  private RoleProcess startController() {
    return RoleProcess.tq("controller", dir, "controller", "--config", simpleConfig.toString());
  }

  private RoleProcess startUnit(int i) {
    return RoleProcess.tq(
        "storage-unit " + i,
        dir,
        "storage-unit",
        "--config",
        simpleConfig.toString(),
        "--unit",
        Integer.toString(i));
  }

  private RoleProcess startNode(int i) {
    return RoleProcess.tq(
        "store-node " + i,
        dir,
        "store-node",
        "--config",
        simpleConfig.toString(),
        "--node",
        Integer.toString(i));
  }

  /** The configuration file that selects {@code backend}. */
  Path config(StorageBackend backend) {
    return backend == StorageBackend.MOONCAKE_STORE ? mooncakeConfig : simpleConfig;
  }

  /** The parsed configuration that selects {@code backend}. */
  TqConfig tqConfig(StorageBackend backend) {
    return TqConfigs.load(config(backend));
  }

  RoleProcess controller() {
    return controller;
  }

  RoleProcess unit(int i) {
    return units.get(i);
  }

  RoleProcess node(int i) {
    return nodes.get(i);
  }

  HostPort controllerAddress() {
    return controllerAddress;
  }

  HostPort unitAddress(int i) {
    return unitAddresses.get(i);
  }

  HostPort nodeAddress(int i) {
    return nodeAddresses.get(i);
  }

  /** Restarts the (killed) controller on its address and waits until it listens. */
  void restartController() {
    controller.close();
    controller = startController();
    controller.awaitListening();
  }

  /** Restarts the (killed) store node {@code i} on its address and waits until it listens. */
  void restartNode(int i) {
    nodes.get(i).close();
    nodes.set(i, startNode(i));
    nodes.get(i).awaitListening();
  }

  /** Restarts the (killed) storage unit {@code i} on its address and waits until it listens. */
  void restartUnit(int i) {
    units.get(i).close();
    units.set(i, startUnit(i));
    units.get(i).awaitListening();
  }

  /** Starts a client process running {@code mainClass ARGS}; closed with the cluster. */
  RoleProcess client(String name, Class<?> mainClass, String... args) {
    RoleProcess jvm = RoleProcess.main(name, dir, mainClass, args);
    others.add(jvm);
    return jvm;
  }

  @Override
  public void close() {
    others.forEach(RoleProcess::close);
    nodes.forEach(RoleProcess::close);
    units.forEach(RoleProcess::close);
    if (controller != null) {
      controller.close();
    }
  }
}
