package org.transferqueue.remote.controller;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.transferqueue.ErrorCode;
import org.transferqueue.ProtocolException;
import org.transferqueue.controller.ClearSamplesRequest;
import org.transferqueue.controller.ConsumptionStatus;
import org.transferqueue.controller.ControllerStatistics;
import org.transferqueue.controller.FetchMode;
import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.controller.IndexSet;
import org.transferqueue.controller.KvListing;
import org.transferqueue.controller.PartitionStatistics;
import org.transferqueue.controller.ProductionStatus;
import org.transferqueue.controller.TagUpdate;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.meta.ProductionUpdate;
import org.transferqueue.remote.MetaReader;
import org.transferqueue.remote.MetaWriter;
import org.transferqueue.sampler.SamplingConfig;

/**
 * The msgpack codecs of the controller's request and reply records ({@link ControllerProtocol}'s
 * entries use them), built on the shared metadata-value codecs of {@link MetaWriter} and {@link
 * MetaReader}. Each record is an array of its components; the layouts are those of docs/PROTOCOL.md
 * §7.2. A reader turns malformed input into {@code PROTOCOL_ERROR}.
 */
public final class ControllerCodec {
  private ControllerCodec() {}

  /**
   * Writes a metadata request as {@code [mode, partitionId, fields, taskName, batchSize,
   * samplingConfig, timeout]}, with an eighth element, the token budget, only when it is set.
   *
   * @param out the writer
   * @param request the value
   */
  public static void writeGetMetadataRequest(MetaWriter out, GetMetadataRequest request) {
    // The token budget is an eighth element only when set, so that every other request keeps the
    // seven-element form that earlier peers read.
    out.arrayHeader(request.tokenBudget() == null ? 7 : 8);
    out.string(request.mode().name());
    out.string(request.partitionId());
    out.strings(request.fields());
    out.string(request.taskName());
    out.nullableInteger(request.batchSize() == null ? null : request.batchSize().longValue());
    out.samplingConfig(request.samplingConfig());
    out.duration(request.timeout());
    if (request.tokenBudget() != null) {
      out.nullableInteger(request.tokenBudget());
    }
  }

  /**
   * Reads a GetMetadataRequest written by {@link #writeGetMetadataRequest}.
   *
   * @param in the reader
   * @return the value
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} for malformed input
   */
  public static GetMetadataRequest readGetMetadataRequest(MetaReader in) {
    int size = in.arrayHeader("GetMetadataRequest");
    if (size != 7 && size != 8) {
      throw new ProtocolException(
          ErrorCode.PROTOCOL_ERROR,
          "GetMetadataRequest has " + size + " elements, expected 7 or 8");
    }
    FetchMode mode = in.enumValue(FetchMode.class, "GetMetadataRequest.mode");
    String partition = in.string("GetMetadataRequest.partitionId");
    List<String> fields = in.strings("GetMetadataRequest.fields");
    String task = in.string("GetMetadataRequest.taskName");
    Integer batchSize = in.nullableInt32("GetMetadataRequest.batchSize");
    SamplingConfig sampling = in.samplingConfig();
    Duration timeout = in.duration("GetMetadataRequest.timeout");
    Long tokenBudget =
        size == 8 && !in.tryNil() ? in.integer("GetMetadataRequest.tokenBudget") : null;
    return new GetMetadataRequest(
        mode, partition, fields, task, batchSize, sampling, timeout, tokenBudget);
  }

  /**
   * Writes a production notification as {@code [partitionId, indexes, fields, backendMeta,
   * generations]}.
   *
   * @param out the writer
   * @param update the value
   */
  public static void writeProductionUpdate(MetaWriter out, ProductionUpdate update) {
    out.arrayHeader(5);
    out.string(update.partitionId());
    out.longs(update.indexes());
    out.fieldSchemas(update.fields());
    out.indexedRecords(update.backendMeta());
    out.longs(update.generations());
  }

  /**
   * Reads a ProductionUpdate written by {@link #writeProductionUpdate}.
   *
   * @param in the reader
   * @return the value
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} for malformed input
   */
  public static ProductionUpdate readProductionUpdate(MetaReader in) {
    in.expectArray(5, "ProductionUpdate");
    String partition = in.string("ProductionUpdate.partitionId");
    List<Long> indexes = in.longs("ProductionUpdate.indexes");
    Map<String, FieldSchema> fields = in.fieldSchemas("ProductionUpdate.fields");
    Map<Long, Map<String, Object>> backend = in.indexedRecords("ProductionUpdate.backendMeta");
    List<Long> generations = in.longs("ProductionUpdate.generations");
    return new ProductionUpdate(partition, indexes, fields, backend, generations);
  }

  /**
   * Writes a tag update as {@code [mode, {partition: {index: record}}]}.
   *
   * @param out the writer
   * @param update the value
   */
  public static void writeTagUpdate(MetaWriter out, TagUpdate update) {
    out.arrayHeader(2);
    out.string(update.mode().name());
    out.mapHeader(update.tags().size());
    update
        .tags()
        .forEach(
            (partition, records) -> {
              out.string(partition);
              out.indexedRecords(records);
            });
  }

  /**
   * Reads a TagUpdate written by {@link #writeTagUpdate}.
   *
   * @param in the reader
   * @return the value
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} for malformed input
   */
  public static TagUpdate readTagUpdate(MetaReader in) {
    in.expectArray(2, "TagUpdate");
    TagUpdate.Mode mode = in.enumValue(TagUpdate.Mode.class, "TagUpdate.mode");
    int n = in.mapHeader("TagUpdate.tags");
    LinkedHashMap<String, Map<Long, Map<String, Object>>> tags = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      String partition = in.requiredString("TagUpdate partition");
      Map<Long, Map<String, Object>> records = in.indexedRecords("TagUpdate.tags." + partition);
      tags.put(partition, records == null ? Map.of() : records);
    }
    return new TagUpdate(tags, mode);
  }

  /**
   * Writes a clear request as {@code [indexes, partitionIds, clearConsumption, generations]}.
   *
   * @param out the writer
   * @param request the value
   */
  public static void writeClearSamplesRequest(MetaWriter out, ClearSamplesRequest request) {
    out.arrayHeader(4);
    out.longs(request.indexes());
    out.strings(request.partitionIds());
    out.bool(request.clearConsumption());
    out.longs(request.generations());
  }

  /**
   * Reads a ClearSamplesRequest written by {@link #writeClearSamplesRequest}.
   *
   * @param in the reader
   * @return the value
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} for malformed input
   */
  public static ClearSamplesRequest readClearSamplesRequest(MetaReader in) {
    in.expectArray(4, "ClearSamplesRequest");
    List<Long> indexes = in.longs("ClearSamplesRequest.indexes");
    List<String> partitions = in.strings("ClearSamplesRequest.partitionIds");
    boolean clearConsumption = in.bool("ClearSamplesRequest.clearConsumption");
    List<Long> generations = in.longs("ClearSamplesRequest.generations");
    return new ClearSamplesRequest(indexes, partitions, clearConsumption, generations);
  }

  /**
   * Writes a production status as {@code [partitionId, fields, indexes, produced]}.
   *
   * @param out the writer
   * @param status the value
   */
  public static void writeProductionStatus(MetaWriter out, ProductionStatus status) {
    out.arrayHeader(4);
    out.string(status.partitionId());
    out.strings(status.fields());
    out.indexSet(status.indexes());
    out.arrayHeader(status.produced().size());
    for (IndexSet column : status.produced()) {
      out.indexSet(column);
    }
  }

  /**
   * Reads a ProductionStatus written by {@link #writeProductionStatus}.
   *
   * @param in the reader
   * @return the value
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} for malformed input
   */
  public static ProductionStatus readProductionStatus(MetaReader in) {
    in.expectArray(4, "ProductionStatus");
    String partition = in.requiredString("ProductionStatus.partitionId");
    List<String> fields = in.strings("ProductionStatus.fields");
    IndexSet indexes = in.indexSet("ProductionStatus.indexes");
    int n = in.arrayHeader("ProductionStatus.produced");
    ArrayList<IndexSet> produced = new ArrayList<>(Math.min(n, 1024));
    for (int i = 0; i < n; i++) {
      produced.add(in.indexSet("ProductionStatus.produced"));
    }
    try {
      return new ProductionStatus(
          partition, fields == null ? List.of() : fields, indexes, produced);
    } catch (IllegalArgumentException e) {
      throw new ProtocolException(ErrorCode.PROTOCOL_ERROR, e.getMessage());
    }
  }

  /**
   * Writes a consumption status as {@code [partitionId, taskName, indexes, consumed]}.
   *
   * @param out the writer
   * @param status the value
   */
  public static void writeConsumptionStatus(MetaWriter out, ConsumptionStatus status) {
    out.arrayHeader(4);
    out.string(status.partitionId());
    out.string(status.taskName());
    out.indexSet(status.indexes());
    out.indexSet(status.consumed());
  }

  /**
   * Reads a ConsumptionStatus written by {@link #writeConsumptionStatus}.
   *
   * @param in the reader
   * @return the value
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} for malformed input
   */
  public static ConsumptionStatus readConsumptionStatus(MetaReader in) {
    in.expectArray(4, "ConsumptionStatus");
    String partition = in.requiredString("ConsumptionStatus.partitionId");
    String task = in.requiredString("ConsumptionStatus.taskName");
    IndexSet indexes = in.indexSet("ConsumptionStatus.indexes");
    IndexSet consumed = in.indexSet("ConsumptionStatus.consumed");
    return new ConsumptionStatus(partition, task, indexes, consumed);
  }

  /**
   * Writes a key listing as {@code [{partition: {key: tags}}, message]}.
   *
   * @param out the writer
   * @param listing the value
   */
  public static void writeKvListing(MetaWriter out, KvListing listing) {
    out.arrayHeader(2);
    out.value(listing.partitions());
    out.string(listing.message());
  }

  /**
   * Reads a KvListing written by {@link #writeKvListing}.
   *
   * @param in the reader
   * @return the value
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} for malformed input
   */
  public static KvListing readKvListing(MetaReader in) {
    in.expectArray(2, "KvListing");
    int n = in.mapHeader("KvListing.partitions");
    LinkedHashMap<String, Map<String, Map<String, Object>>> partitions = new LinkedHashMap<>();
    for (int p = 0; p < n; p++) {
      String partition = in.requiredString("KvListing partition");
      int keys = in.mapHeader("KvListing." + partition);
      LinkedHashMap<String, Map<String, Object>> perKey = new LinkedHashMap<>();
      for (int k = 0; k < keys; k++) {
        String key = in.requiredString("KvListing key");
        perKey.put(key, in.valueMap("KvListing." + partition + "." + key));
      }
      partitions.put(partition, perKey);
    }
    String message = in.string("KvListing.message");
    return new KvListing(partitions, message);
  }

  /**
   * Writes a partition's statistics as an array of its nine components in declaration order.
   *
   * @param out the writer
   * @param stats the value
   */
  public static void writePartitionStatistics(MetaWriter out, PartitionStatistics stats) {
    out.arrayHeader(9);
    out.string(stats.partitionId());
    out.integer(stats.createdAtMillis());
    out.integer(stats.totalSamples());
    out.integer(stats.preAllocatedSamples());
    out.integer(stats.totalFields());
    out.strings(stats.registeredTasks());
    out.integer(stats.producedSamples());
    out.value(stats.producedPerField());
    out.value(stats.consumedPerTask());
  }

  /**
   * Reads a PartitionStatistics written by {@link #writePartitionStatistics}.
   *
   * @param in the reader
   * @return the value
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} for malformed input
   */
  public static PartitionStatistics readPartitionStatistics(MetaReader in) {
    in.expectArray(9, "PartitionStatistics");
    String partition = in.requiredString("PartitionStatistics.partitionId");
    long created = in.integer("PartitionStatistics.createdAtMillis");
    int total = in.int32("PartitionStatistics.totalSamples");
    int preAllocated = in.int32("PartitionStatistics.preAllocatedSamples");
    int totalFields = in.int32("PartitionStatistics.totalFields");
    List<String> tasks = in.strings("PartitionStatistics.registeredTasks");
    int produced = in.int32("PartitionStatistics.producedSamples");
    Map<String, Integer> perField = counts(in, "PartitionStatistics.producedPerField");
    Map<String, Integer> perTask = counts(in, "PartitionStatistics.consumedPerTask");
    return new PartitionStatistics(
        partition,
        created,
        total,
        preAllocated,
        totalFields,
        tasks == null ? List.of() : tasks,
        produced,
        perField,
        perTask);
  }

  private static Map<String, Integer> counts(MetaReader in, String what) {
    int n = in.mapHeader(what);
    LinkedHashMap<String, Integer> map = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      map.put(in.requiredString(what + " key"), in.int32(what));
    }
    return map;
  }

  /**
   * Writes controller statistics as {@code [partitions, allocatedIndexes, reusableIndexes,
   * nextFreshIndex]}.
   *
   * @param out the writer
   * @param stats the value
   */
  public static void writeControllerStatistics(MetaWriter out, ControllerStatistics stats) {
    out.arrayHeader(4);
    out.arrayHeader(stats.partitions().size());
    for (PartitionStatistics p : stats.partitions()) {
      writePartitionStatistics(out, p);
    }
    out.integer(stats.allocatedIndexes());
    out.integer(stats.reusableIndexes());
    out.integer(stats.nextFreshIndex());
  }

  /**
   * Reads a ControllerStatistics written by {@link #writeControllerStatistics}.
   *
   * @param in the reader
   * @return the value
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} for malformed input
   */
  public static ControllerStatistics readControllerStatistics(MetaReader in) {
    in.expectArray(4, "ControllerStatistics");
    int n = in.arrayHeader("ControllerStatistics.partitions");
    ArrayList<PartitionStatistics> partitions = new ArrayList<>(Math.min(n, 1024));
    for (int i = 0; i < n; i++) {
      partitions.add(readPartitionStatistics(in));
    }
    long allocated = in.integer("ControllerStatistics.allocatedIndexes");
    int reusable = in.int32("ControllerStatistics.reusableIndexes");
    long next = in.integer("ControllerStatistics.nextFreshIndex");
    return new ControllerStatistics(partitions, allocated, reusable, next);
  }
}
