package org.transferqueue.client;

import static org.transferqueue.client.KvCalls.join;

import org.transferqueue.controller.GetMetadataRequest;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.tensor.Batch;

/**
 * The data calls of {@link MetaClient} in the two forms of the BOTH fixture: blocking, or the
 * asynchronous twin joined (failures rethrown unwrapped).
 */
interface MetaCalls {
  BatchMeta getMeta(GetMetadataRequest request);

  BatchMeta put(Batch data, String partitionId);

  BatchMeta put(Batch data, BatchMeta meta);

  Batch getData(BatchMeta meta);

  void setTags(BatchMeta meta);

  void clearPartition(String partitionId);

  void clearSamples(BatchMeta meta);

  /** The two forms of the BOTH fixture. */
  enum Form {
    BLOCKING,
    ASYNC;

    /** The calls of this form over {@code client}. */
    MetaCalls over(MetaClient client) {
      return this == BLOCKING ? new Blocking(client) : new Async(client);
    }
  }

  /** The blocking methods. */
  record Blocking(MetaClient client) implements MetaCalls {
    @Override
    public BatchMeta getMeta(GetMetadataRequest request) {
      return client.getMeta(request);
    }

    @Override
    public BatchMeta put(Batch data, String partitionId) {
      return client.put(data, partitionId);
    }

    @Override
    public BatchMeta put(Batch data, BatchMeta meta) {
      return client.put(data, meta);
    }

    @Override
    public Batch getData(BatchMeta meta) {
      return client.getData(meta);
    }

    @Override
    public void setTags(BatchMeta meta) {
      client.setTags(meta);
    }

    @Override
    public void clearPartition(String partitionId) {
      client.clearPartition(partitionId);
    }

    @Override
    public void clearSamples(BatchMeta meta) {
      client.clearSamples(meta);
    }
  }

  /** The asynchronous twins, joined. */
  record Async(MetaClient client) implements MetaCalls {
    @Override
    public BatchMeta getMeta(GetMetadataRequest request) {
      return join(client.getMetaAsync(request));
    }

    @Override
    public BatchMeta put(Batch data, String partitionId) {
      return join(client.putAsync(data, partitionId));
    }

    @Override
    public BatchMeta put(Batch data, BatchMeta meta) {
      return join(client.putAsync(data, meta));
    }

    @Override
    public Batch getData(BatchMeta meta) {
      return join(client.getDataAsync(meta));
    }

    @Override
    public void setTags(BatchMeta meta) {
      join(client.setTagsAsync(meta));
    }

    @Override
    public void clearPartition(String partitionId) {
      join(client.clearPartitionAsync(partitionId));
    }

    @Override
    public void clearSamples(BatchMeta meta) {
      join(client.clearSamplesAsync(meta));
    }
  }
}
