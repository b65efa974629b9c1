package org.transferqueue.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;
import org.transferqueue.JsonWriter;
import org.transferqueue.TqException;
import org.transferqueue.client.TqClient;
import org.transferqueue.config.HostPort;
import org.transferqueue.config.StorageBackend;
import org.transferqueue.controller.ControllerStatistics;
import org.transferqueue.controller.PartitionStatistics;
import org.transferqueue.objectstore.StoreStatistics;
import org.transferqueue.remote.objectstore.RemoteObjectStore;
import org.transferqueue.remote.storage.RemoteStorageUnit;
import org.transferqueue.storage.simple.StorageUnitStats;
import org.transferqueue.system.ConfigMapper;
import org.transferqueue.transport.TransportClient;
import org.transferqueue.transport.TransportConfig;
import picocli.CommandLine.Command;

/**
 * {@code tq status}: the state of a running system — partitions with their sample counts,
 * production per field, consumption per task, and the storage that holds the data: with
 * SimpleStorage the occupancy of every storage unit of {@code network.storage_unit_addresses}, with
 * MooncakeStore what every store node of {@code network.store_node_addresses} holds (objects, bytes
 * used, capacity, evictions). A unit or node that does not answer is reported in its row; the
 * command still succeeds.
 */
@Command(
    name = "status",
    description =
        "Print partitions, sample counts, production and consumption, and storage usage of a"
            + " running system (tables, or JSON with --json): the storage units of a"
            + " SimpleStorage deployment, the store nodes of a MooncakeStore one.")
final class StatusCommand extends ConnectedCommand {

  /** What the storage unit or store node at {@code index} reported, or why it did not. */
  private record Report<S>(int index, HostPort address, S stats, String error) {}

  @Override
  int run(TqClient tq, PrintWriter out) {
    ControllerStatistics statistics = tq.controller().statistics();
    boolean mooncake = tq.config().backend().storageBackend() == StorageBackend.MOONCAKE_STORE;
    List<Report<StorageUnitStats>> units = mooncake ? List.of() : units(tq);
    List<Report<StoreStatistics>> nodes = mooncake ? nodes(tq) : List.of();
    if (json) {
      Map<String, Object> result = toJson(statistics);
      if (mooncake) {
        result.put("store_nodes", reportsJson("node", nodes, StatusCommand::nodeJson));
      } else {
        result.put("storage_units", reportsJson("unit", units, StatusCommand::unitJson));
      }
      out.println(JsonWriter.COMPACT.write(result));
    } else {
      printPartitions(statistics, out);
      out.println();
      if (mooncake) {
        printNodes(nodes, out);
      } else {
        printUnits(units, out);
      }
    }
    return 0;
  }

  /** Asks each address in turn; a failure becomes that address's error, the others still ask. */
  private static <S> List<Report<S>> ask(List<HostPort> addresses, IntFunction<S> query) {
    List<Report<S>> reports = new ArrayList<>();
    for (int i = 0; i < addresses.size(); i++) {
      try {
        reports.add(new Report<>(i, addresses.get(i), query.apply(i), null));
      } catch (TqException e) {
        reports.add(new Report<>(i, addresses.get(i), null, e.code() + ": " + e.getMessage()));
      }
    }
    return reports;
  }

  private static List<Report<StoreStatistics>> nodes(TqClient tq) {
    List<HostPort> addresses = tq.config().network().storeNodeAddresses();
    if (addresses.isEmpty()) {
      return List.of();
    }
    RemoteObjectStore store =
        RemoteObjectStore.connect(
            addresses, ConfigMapper.storeNodeClient(tq.config()), tq.allocator());
    try {
      return ask(addresses, store::nodeStatistics);
    } finally {
      store.closeStore();
    }
  }

  private static List<Report<StorageUnitStats>> units(TqClient tq) {
    List<HostPort> addresses = tq.config().network().storageUnitAddresses();
    if (addresses.isEmpty()) {
      return List.of();
    }
    TransportConfig transport = ConfigMapper.storageUnitClient(tq.config());
    try (TransportClient client = new TransportClient(transport, tq.allocator())) {
      return ask(
          addresses,
          i ->
              new RemoteStorageUnit(client, addresses.get(i), transport.defaultCallTimeout())
                  .stats());
    }
  }

  private static Map<String, Object> toJson(ControllerStatistics statistics) {
    Map<String, Object> result = new LinkedHashMap<>();
    List<Object> partitions = new ArrayList<>();
    for (PartitionStatistics p : statistics.partitions()) {
      Map<String, Object> partition = new LinkedHashMap<>();
      partition.put("partition", p.partitionId());
      partition.put("samples", p.totalSamples());
      partition.put("produced_samples", p.producedSamples());
      partition.put("produced_per_field", p.producedPerField());
      partition.put("consumed_per_task", p.consumedPerTask());
      partitions.add(partition);
    }
    result.put("partitions", partitions);
    result.put("total_samples", statistics.totalSamples());
    return result;
  }

  /** Each report as {@code {KIND: index, "address": ..., then the statistics or "error"}}. */
  private static <S> List<Object> reportsJson(
      String kind, List<Report<S>> reports, BiConsumer<S, Map<String, Object>> statistics) {
    List<Object> json = new ArrayList<>();
    for (Report<S> r : reports) {
      Map<String, Object> entry = new LinkedHashMap<>();
      entry.put(kind, r.index());
      entry.put("address", r.address().toString());
      if (r.stats() == null) {
        entry.put("error", r.error());
      } else {
        statistics.accept(r.stats(), entry);
      }
      json.add(entry);
    }
    return json;
  }

  private static void nodeJson(StoreStatistics s, Map<String, Object> node) {
    node.put("objects", s.objects());
    node.put("used_bytes", s.usedBytes());
    node.put("capacity_bytes", s.capacityBytes());
    node.put("evicted_objects", s.evictedObjects());
  }

  private static void unitJson(StorageUnitStats s, Map<String, Object> unit) {
    unit.put("id", s.unitId());
    unit.put("samples", s.samples());
    unit.put("cells", s.cells());
    unit.put("fields", s.fields());
    unit.put("allocated_bytes", s.allocatedBytes());
    unit.put("peak_bytes", s.peakBytes());
    unit.put(
        "capacity_samples",
        s.capacitySamples().isPresent() ? s.capacitySamples().getAsLong() : null);
  }

  private static void printPartitions(ControllerStatistics statistics, PrintWriter out) {
    out.println("Partitions");
    TextTable partitions = new TextTable("PARTITION", "SAMPLES", "PRODUCED", "FIELDS", "TASKS");
    TextTable production = new TextTable("PARTITION", "FIELD", "PRODUCED", "OF");
    TextTable consumption = new TextTable("PARTITION", "TASK", "CONSUMED", "OF");
    for (PartitionStatistics p : statistics.partitions()) {
      partitions.row(
          p.partitionId(),
          p.totalSamples(),
          p.producedSamples(),
          p.producedPerField().size(),
          p.consumedPerTask().size());
      p.producedPerField()
          .forEach((field, n) -> production.row(p.partitionId(), field, n, p.totalSamples()));
      p.consumedPerTask()
          .forEach((task, n) -> consumption.row(p.partitionId(), task, n, p.totalSamples()));
    }
    printOrNone(partitions, "no partitions", out);
    out.println();
    out.println("Production per field");
    printOrNone(production, "no fields produced", out);
    out.println();
    out.println("Consumption per task");
    printOrNone(consumption, "no task has consumed", out);
  }

  private static void printNodes(List<Report<StoreStatistics>> nodes, PrintWriter out) {
    out.println("Store nodes");
    TextTable storage =
        new TextTable("NODE", "ADDRESS", "OBJECTS", "USED_BYTES", "CAPACITY_BYTES", "EVICTED");
    for (Report<StoreStatistics> n : nodes) {
      StoreStatistics s = n.stats();
      if (s == null) {
        storage.row(n.index(), n.address(), "error: " + n.error(), "-", "-", "-");
      } else {
        storage.row(
            n.index(),
            n.address(),
            s.objects(),
            s.usedBytes(),
            s.capacityBytes(),
            s.evictedObjects());
      }
    }
    printOrNone(
        storage,
        "no store nodes configured (network.store_node_addresses): every process keeps its own"
            + " store",
        out);
  }

  private static void printUnits(List<Report<StorageUnitStats>> units, PrintWriter out) {
    out.println("Storage units");
    TextTable storage =
        new TextTable(
            "UNIT", "ADDRESS", "SAMPLES", "CELLS", "FIELDS", "BYTES", "PEAK_BYTES", "CAPACITY");
    for (Report<StorageUnitStats> u : units) {
      StorageUnitStats s = u.stats();
      if (s == null) {
        storage.row(u.index(), u.address(), "error: " + u.error(), "-", "-", "-", "-", "-");
      } else {
        storage.row(
            u.index(),
            u.address(),
            s.samples(),
            s.cells(),
            s.fields(),
            s.allocatedBytes(),
            s.peakBytes(),
            s.capacitySamples().isPresent() ? s.capacitySamples().getAsLong() : "unlimited");
      }
    }
    printOrNone(storage, "no storage units configured (network.storage_unit_addresses)", out);
  }

  private static void printOrNone(TextTable table, String none, PrintWriter out) {
    if (table.isEmpty()) {
      out.println("  (" + none + ")");
    } else {
      table.print(out);
    }
  }
}
