package org.transferqueue.controller;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.sampler.Sampler;

/**
 * Runs the controller's table operations whose outcome the journal records, and appends each record
 * right after its change: the indexes an insert received, the samples keys created, a partition's
 * creation, a served fetch, a task a read registered. Without a journal it only runs the
 * operations. Records whose content is the request itself (a production update, tags, a clear) are
 * encoded by {@link ControllerRecords} before the lock and appended with {@link #record}.
 *
 * <p>Not thread-safe: owned by {@link Controller}, which calls it only under its lock; the journal
 * is attached once, before the controller serves.
 */
final class ChangeRecorder {
  private final ControllerTables tables;
  private final ControllerOptions config;

  // Set once by attach() before the controller is published; null when it keeps no journal.
  private volatile ControllerJournal journal;

  ChangeRecorder(ControllerTables tables, ControllerOptions config) {
    this.tables = tables;
    this.config = config;
  }

  /** The journal, or null without one. */
  ControllerJournal journal() {
    return journal;
  }

  void attach(ControllerJournal recovered) {
    journal = recovered;
  }

  /** Appends a record encoded before the lock was taken; nothing without a journal. */
  void record(ControllerRecords.Entry entry) {
    if (journal != null) {
      journal.append(entry);
    }
  }

  /** Creates a partition unless it exists; true if created. */
  boolean createPartition(String partitionId) {
    boolean created = tables.createIfAbsent(partitionId);
    if (created && journal != null) {
      Partition partition = tables.partition(partitionId);
      journal.append(
          ControllerRecords.createPartition(
              partition, config.preallocSampleNum(), partition.preAllocated()));
    }
    return created;
  }

  /** Reserves the samples of an insert, journaled with its indexes. */
  BatchMeta insert(GetMetadataRequest request) {
    boolean existed = tables.partition(request.partitionId()) != null;
    BatchMeta meta = tables.insert(request);
    if (journal != null) {
      journal.append(
          ControllerRecords.insert(
              request.partitionId(),
              existed ? null : tables.partition(request.partitionId()),
              config.preallocSampleNum(),
              meta.globalIndexArray()));
    }
    return meta;
  }

  /** One sampling attempt, journaled: its outcome, or the task it registered. */
  SamplingStep.Outcome attempt(
      SamplingStep sampling,
      GetMetadataRequest request,
      List<String> sortedFields,
      Sampler sampler) {
    boolean known = hasTask(request.partitionId(), request.taskName());
    SamplingStep.Outcome outcome = sampling.attempt(request, sortedFields, sampler);
    if (journal != null) {
      if (outcome.meta() != null) {
        journal.append(
            ControllerRecords.fetch(request, outcome.meta().globalIndexes(), outcome.consumed()));
      } else {
        taskIfNew(known, request.partitionId(), request.taskName());
      }
    }
    return outcome;
  }

  /** The samples ready for a task; journals the task when the scan registered it. */
  IndexSet scanReady(String partitionId, List<String> fields, String taskName) {
    boolean known = hasTask(partitionId, taskName);
    IndexSet ready = tables.scanReady(partitionId, fields, taskName);
    taskIfNew(known, partitionId, taskName);
    return ready;
  }

  /** A task's consumption status; journals the task when the query registered it. */
  Optional<ConsumptionStatus> consumptionStatus(String partitionId, String taskName) {
    boolean known = hasTask(partitionId, taskName);
    Optional<ConsumptionStatus> status = tables.consumptionStatus(partitionId, taskName);
    taskIfNew(known, partitionId, taskName);
    return status;
  }

  /** Resets consumption; journaled for an existing partition. */
  boolean resetConsumption(String partitionId, String taskName) {
    boolean exists = tables.partition(partitionId) != null;
    boolean reset = tables.resetConsumption(partitionId, taskName);
    if (exists && journal != null) {
      journal.append(ControllerRecords.resetConsumption(partitionId, taskName));
    }
    return reset;
  }

  /** Clears a whole partition; journaled when it existed. */
  boolean clearPartition(String partitionId) {
    boolean cleared = tables.clearPartition(partitionId);
    if (cleared && journal != null) {
      journal.append(ControllerRecords.clearPartition(partitionId));
    }
    return cleared;
  }

  /** Resolves keys, creating missing ones, journaled with the samples it created. */
  BatchMeta resolveKeysCreating(ResolveKeysRequest request) {
    boolean existed = tables.partition(request.partitionId()) != null;
    List<Long> created = new ArrayList<>();
    BatchMeta meta = tables.resolveKeys(request.partitionId(), request.keys(), true, created::add);
    keys(request, existed, created);
    return meta;
  }

  /**
   * A key-value put's schema check and key resolution, journaled as {@link #resolveKeysCreating}.
   */
  KeyResolution resolveKeysForPut(
      ResolveKeysRequest request, Map<String, FieldSchema> fields, int sampleCount) {
    boolean existed = tables.partition(request.partitionId()) != null;
    KeyResolution resolution =
        tables.resolveKeysForPut(request.partitionId(), request.keys(), fields, sampleCount);
    keys(request, existed, resolution.createdIndexes());
    return resolution;
  }

  /** Journals keys resolved with creation when the call created a partition or a sample. */
  private void keys(ResolveKeysRequest request, boolean existed, List<Long> created) {
    if (journal != null && (!existed || !created.isEmpty())) {
      journal.append(
          ControllerRecords.keys(
              request.partitionId(),
              request.keys(),
              existed ? null : tables.partition(request.partitionId()),
              config.preallocSampleNum(),
              created));
    }
  }

  private boolean hasTask(String partitionId, String taskName) {
    Partition partition = tables.partition(partitionId);
    return partition != null && partition.hasTask(taskName);
  }

  /** Journals a task that a read registered (a status query, a scan, a fetch that found none). */
  private void taskIfNew(boolean known, String partitionId, String taskName) {
    if (!known && journal != null && hasTask(partitionId, taskName)) {
      journal.append(ControllerRecords.task(partitionId, taskName));
    }
  }
}
