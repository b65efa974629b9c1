package org.transferqueue.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.transferqueue.ErrorCode;
import org.transferqueue.Strings;
import org.transferqueue.TqException;
import org.transferqueue.controller.Names;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.KvBatchMeta;
import org.transferqueue.meta.MetaValues;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.Tensor;

/**
 * The Redis-style key-value API: samples addressed by (partition, key), columns by field name, and
 * a tag map per key. No consumption tracking and no sampler: a driver decides which keys go where.
 * Key-value samples are ordinary samples, so metadata fetches over a key-value partition work too.
 *
 * <pre>{@code
 * KvApi kv = system.kv();
 * kv.put("0_0", "train", Map.of("input_ids", tensor), Map.of("status", "running"));
 * kv.batchPut(List.of("1_0", "1_1"), "train", batch, null);
 * try (Batch rows = kv.batchGet(List.of("0_0", "1_1"), "train", List.of("input_ids"))) { ... }
 * kv.clear(List.of("0_0"), "train");
 * }</pre>
 *
 * <p>Every argument is validated before anything is registered or written: a rejected call leaves
 * no key, sample or tag behind. Keys (a single key, or the key list of a call, which must be
 * non-empty and without repeats) and partition ids are non-null, non-empty, valid Unicode strings
 * ({@link Names}; {@code INVALID_ARGUMENT} naming the position of a bad key, {@code DUPLICATE_KEY}
 * for a repeat); field names follow {@link MetaClient}'s rule. Thread-safe; every method has an
 * {@code ...Async} twin.
 */
public final class KvApi implements AutoCloseable {
  private final MetaClient client;
  private final MissingKeyPolicy missingKeyPolicy;
  private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();

  /**
   * Creates the API over a client.
   *
   * @param client the low-level client; not owned
   * @param missingKeyPolicy what reads do about missing keys
   */
  public KvApi(MetaClient client, MissingKeyPolicy missingKeyPolicy) {
    this.client = Objects.requireNonNull(client, "client");
    this.missingKeyPolicy = Objects.requireNonNull(missingKeyPolicy, "missingKeyPolicy");
  }

  /**
   * Writes fields and/or tags of one key, creating the key (and the partition) if needed.
   *
   * @param key the sample key
   * @param partitionId the partition
   * @param fields field name to value, or null: a tensor becomes one row (a leading dimension of 1
   *     is added); any other value becomes a one-row object column. The caller keeps ownership of
   *     the tensors.
   * @param tag tags merged into the key's tags (new values win), or null
   * @return the key's metadata: its merged tags and every field now produced for it
   * @throws TqException {@code INVALID_ARGUMENT} for a null, empty or not well-formed key, when
   *     both {@code fields} and {@code tag} are null or empty, or when a value cannot be stored;
   *     nothing is registered then
   */
  public KvBatchMeta put(
      String key, String partitionId, Map<String, ?> fields, Map<String, ?> tag) {
    Strings.checkName(key, "key");
    if (isEmpty(fields) && isEmpty(tag)) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "put of key '" + key + "': provide fields or a tag");
    }
    try (Batch row = isEmpty(fields) ? null : oneRow(key, fields)) {
      return write(List.of(key), partitionId, row, tag == null ? null : List.of(tag), null);
    }
  }

  /**
   * Asynchronous {@link #put(String, String, Map, Map)}.
   *
   * @param key the key
   * @param partitionId the partition
   * @param fields the values, or null; must stay valid until completion
   * @param tag the tags, or null
   * @return the key's metadata, later
   */
  public CompletableFuture<KvBatchMeta> putAsync(
      String key, String partitionId, Map<String, ?> fields, Map<String, ?> tag) {
    return async(() -> put(key, partitionId, fields, tag));
  }

  /**
   * Writes a one-row batch and/or tags under one key.
   *
   * @param key the key
   * @param partitionId the partition
   * @param row a batch of exactly one row, or null; the caller keeps ownership
   * @param tag tags to merge, or null
   * @return the key's metadata
   * @throws TqException as {@link #put(String, String, Map, Map)}
   */
  public KvBatchMeta put(String key, String partitionId, Batch row, Map<String, ?> tag) {
    Strings.checkName(key, "key");
    if (row != null && row.rowCount() != 1) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "put of key '" + key + "' takes a batch of 1 row, got " + row.rowCount());
    }
    return batchPut(List.of(key), partitionId, row, tag == null ? null : List.of(tag));
  }

  /**
   * Asynchronous {@link #put(String, String, Batch, Map)}.
   *
   * @param key the key
   * @param partitionId the partition
   * @param row a batch of exactly one row, or null; must stay open until completion
   * @param tag the tags, or null
   * @return the key's metadata, later
   */
  public CompletableFuture<KvBatchMeta> putAsync(
      String key, String partitionId, Batch row, Map<String, ?> tag) {
    return async(() -> put(key, partitionId, row, tag));
  }

  /**
   * Writes rows and/or tags of several keys: row {@code i} and tag {@code i} belong to key {@code
   * i}. Missing keys are created. Partial updates are allowed: a field written for some keys only
   * is produced for those keys only.
   *
   * @param keys distinct keys, at least one
   * @param partitionId the partition
   * @param fields a batch with exactly one row per key, or null; the caller keeps ownership
   * @param tags one tag map per key, or null
   * @return metadata of the keys: merged tags and the fields produced for all of them
   * @throws TqException {@code INVALID_ARGUMENT} for an empty key list or key, or when neither
   *     fields nor tags are given, {@code DUPLICATE_KEY} for a repeated key, {@code SHAPE_MISMATCH}
   *     when the row or tag count differs from the key count; all before anything is registered
   */
  public KvBatchMeta batchPut(
      List<String> keys, String partitionId, Batch fields, List<? extends Map<String, ?>> tags) {
    return batchPut(keys, partitionId, fields, tags, null);
  }

  /**
   * Like {@link #batchPut(List, String, Batch, List)}, with a data parser the storage units run on
   * their rows before storing them (SimpleStorage only).
   *
   * @param keys distinct keys, at least one
   * @param partitionId the partition
   * @param fields a batch with exactly one row per key, or null; the caller keeps ownership
   * @param tags one tag map per key, or null
   * @param parser a parser registered on the storage units, or null for none
   * @return metadata of the keys: merged tags and the fields produced for all of them
   * @throws TqException as {@link #batchPut(List, String, Batch, List)}; {@code
   *     UNSUPPORTED_OPERATION} on a backend without parsers and {@code DATA_PARSER_FAILED} for a
   *     failing parser, after which no key the call created remains
   */
  public KvBatchMeta batchPut(
      List<String> keys,
      String partitionId,
      Batch fields,
      List<? extends Map<String, ?>> tags,
      DataParserReference parser) {
    checkKeys(keys);
    if (fields == null && (tags == null || tags.stream().allMatch(KvApi::isEmpty))) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "batch put of " + keys.size() + " keys: provide fields or tags");
    }
    if (fields != null) {
      LocalMetaClient.checkFieldNames(fields.fields());
    }
    if (fields != null && fields.rowCount() != keys.size()) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "batch put: fields has "
              + fields.rowCount()
              + " rows but there are "
              + keys.size()
              + " keys");
    }
    if (tags != null && tags.size() != keys.size()) {
      throw new TqException(
          ErrorCode.SHAPE_MISMATCH,
          "batch put: " + tags.size() + " tag maps for " + keys.size() + " keys");
    }
    return write(keys, partitionId, fields, tags, parser);
  }

  /**
   * Asynchronous {@link #batchPut(List, String, Batch, List, DataParserReference)}.
   *
   * @param keys the keys
   * @param partitionId the partition
   * @param fields the rows, or null; must stay open until completion
   * @param tags the tags, or null
   * @param parser the parser, or null
   * @return the metadata, later
   */
  public CompletableFuture<KvBatchMeta> batchPutAsync(
      List<String> keys,
      String partitionId,
      Batch fields,
      List<? extends Map<String, ?>> tags,
      DataParserReference parser) {
    return async(() -> batchPut(keys, partitionId, fields, tags, parser));
  }

  /**
   * Asynchronous {@link #batchPut(List, String, Batch, List)}.
   *
   * @param keys the keys
   * @param partitionId the partition
   * @param fields the rows, or null; must stay open until completion
   * @param tags the tags, or null
   * @return the metadata, later
   */
  public CompletableFuture<KvBatchMeta> batchPutAsync(
      List<String> keys, String partitionId, Batch fields, List<? extends Map<String, ?>> tags) {
    return async(() -> batchPut(keys, partitionId, fields, tags));
  }

  private KvBatchMeta write(
      List<String> keys,
      String partitionId,
      Batch fields,
      List<? extends Map<String, ?>> tags,
      DataParserReference parser) {
    // Tags are checked (JSON-compatible, valid Unicode) before anything is registered or stored.
    List<Map<String, Object>> frozenTags = tags == null ? null : freeze(tags);
    // One controller call resolves (creating) the keys and checks the rows' schema against the
    // keys' fields, so storage never writes data whose dtype conflicts; a failed store removes the
    // keys this call created.
    BatchMeta meta =
        fields != null && fields.rowCount() > 0
            ? client.putKeys(partitionId, keys, fields, parser)
            : client.resolveKeys(partitionId, keys, true);
    if (frozenTags != null) {
      meta = meta.withTagsMerged(frozenTags);
      client.setTags(meta);
    }
    // The write knows the result: the fields produced for all keys before it plus the ones it
    // wrote for every key, and the tags merged as the controller merges them.
    return KvBatchMeta.of(keys, meta, meta.fieldNames());
  }

  /**
   * Reads rows of keys, in request order.
   *
   * @param keys distinct keys, at least one
   * @param partitionId the partition
   * @param selectFields the fields to read, or null for every field produced for all found keys
   * @return a batch the caller owns and must close
   * @throws TqException {@code INVALID_ARGUMENT} for a bad key list or a null, empty or not
   *     well-formed selected field name; {@code UNKNOWN_KEY} when no key (or the partition) exists,
   *     or when some key is missing under {@link MissingKeyPolicy#FAIL}; {@code UNKNOWN_FIELD} when
   *     a selected field is not produced for every found key; {@code ILLEGAL_STATE} when the found
   *     keys share no produced field
   */
  public Batch batchGet(List<String> keys, String partitionId, List<String> selectFields) {
    return read(keys, partitionId, selectFields, null);
  }

  /**
   * Reads rows of keys; with a {@code descriptor}, refuses keys whose sample is not the one it
   * named.
   */
  private Batch read(
      List<String> keys, String partitionId, List<String> selectFields, KvBatchMeta descriptor) {
    checkKeys(keys);
    if (selectFields != null) {
      Names.checkFieldNames(selectFields);
    }
    BatchMeta meta = client.resolveKeys(partitionId, keys, false);
    if (descriptor != null) {
      requireSameSamples(descriptor, meta);
    }
    if (meta.isEmpty()) {
      throw new TqException(
          ErrorCode.UNKNOWN_KEY,
          "keys or partition were not found: partition '" + partitionId + "', keys " + keys);
    }
    if (meta.size() < keys.size() && missingKeyPolicy == MissingKeyPolicy.FAIL) {
      Set<String> found = new HashSet<>(client.resolveIndexes(partitionId, meta.globalIndexes()));
      List<String> missing = keys.stream().filter(k -> !found.contains(k)).toList();
      throw new TqException(
          ErrorCode.UNKNOWN_KEY, "keys not found in partition '" + partitionId + "': " + missing);
    }
    List<String> available = meta.fieldNames();
    List<String> fields;
    if (selectFields == null) {
      if (available.isEmpty()) {
        throw new TqException(
            ErrorCode.ILLEGAL_STATE,
            "keys "
                + keys
                + " of partition '"
                + partitionId
                + "' are not ready: no field is produced for all of them");
      }
      fields = available;
    } else {
      List<String> unknown = selectFields.stream().filter(f -> !available.contains(f)).toList();
      if (!unknown.isEmpty()) {
        throw new TqException(
            ErrorCode.UNKNOWN_FIELD,
            "fields "
                + unknown
                + " are not produced for every requested key of partition '"
                + partitionId
                + "' (available: "
                + available
                + ")");
      }
      fields = selectFields;
    }
    return client.getData(meta.selectFields(fields));
  }

  /**
   * Asynchronous {@link #batchGet}.
   *
   * @param keys the keys
   * @param partitionId the partition
   * @param selectFields the fields, or null
   * @return the batch, later; the caller owns it
   */
  public CompletableFuture<Batch> batchGetAsync(
      List<String> keys, String partitionId, List<String> selectFields) {
    return async(() -> batchGet(keys, partitionId, selectFields));
  }

  /**
   * Reads the keys of a key-value metadata value.
   *
   * @param meta the keys, partition and (optionally) fields to read
   * @param selectFields fields to read, each of which must be in {@code meta.fields()} when that is
   *     not null; or null to read {@code meta.fields()} (or, when that is null or empty, every
   *     field produced for all keys)
   * @return a batch the caller owns and must close
   */
  public Batch get(KvBatchMeta meta, List<String> selectFields) {
    Objects.requireNonNull(meta, "meta");
    if (meta.partitionId() == null) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT, "the metadata has no partition id: " + meta);
    }
    List<String> metaFields = meta.fields() == null ? List.of() : meta.fields();
    List<String> fields = selectFields;
    if (fields != null && meta.fields() != null) {
      List<String> absent = fields.stream().filter(f -> !metaFields.contains(f)).toList();
      if (!absent.isEmpty()) {
        throw new TqException(
            ErrorCode.UNKNOWN_FIELD,
            "selected fields "
                + absent
                + " were not found in the metadata's fields "
                + meta.fields());
      }
    } else if (fields == null && !metaFields.isEmpty()) {
      fields = metaFields;
    }
    return read(meta.keys(), meta.partitionId(), fields, meta);
  }

  /**
   * Refuses a read through a descriptor one of whose keys now names another sample (the key was
   * cleared and created again since): its index or generation differs from the descriptor's.
   *
   * @throws TqException {@code STALE_METADATA} naming the keys
   */
  private void requireSameSamples(KvBatchMeta descriptor, BatchMeta resolved) {
    List<String> keys = descriptor.keys();
    boolean known = false;
    for (int i = 0; i < keys.size(); i++) {
      known |= descriptor.knowsSample(i);
    }
    if (!known || resolved.isEmpty()) {
      return;
    }
    // Resolution lists the found keys in request order; when some are missing, ask which.
    List<String> found =
        resolved.size() == keys.size()
            ? keys
            : client.resolveIndexes(descriptor.partitionId(), resolved.globalIndexes());
    Map<String, Integer> position = new HashMap<>();
    for (int i = 0; i < keys.size(); i++) {
      position.put(keys.get(i), i);
    }
    List<String> stale = new ArrayList<>();
    for (int r = 0; r < resolved.size(); r++) {
      Integer i = position.get(found.get(r));
      if (i != null
          && descriptor.knowsSample(i)
          && (descriptor.globalIndexes().get(i) != resolved.globalIndex(r)
              || descriptor.generations().get(i) != resolved.generation(r))) {
        stale.add(found.get(r));
      }
    }
    if (!stale.isEmpty()) {
      throw new TqException(
          ErrorCode.STALE_METADATA,
          "stale metadata: keys "
              + Strings.quote(stale)
              + " of partition "
              + Strings.quote(descriptor.partitionId())
              + " were cleared and written again since the descriptor was made; read them by key"
              + " or with a fresh descriptor");
    }
  }

  /**
   * Asynchronous {@link #get}.
   *
   * @param meta the keys
   * @param selectFields the fields, or null
   * @return the batch, later; the caller owns it
   */
  public CompletableFuture<Batch> getAsync(KvBatchMeta meta, List<String> selectFields) {
    return async(() -> get(meta, selectFields));
  }

  /**
   * The keys and tags of one partition, or of every partition.
   *
   * @param partitionId a partition, or null for all
   * @return partition to key (in registration order) to tags; empty for an unknown partition
   */
  public Map<String, Map<String, Map<String, Object>>> list(String partitionId) {
    return client.listKeys(partitionId);
  }

  /**
   * Asynchronous {@link #list}.
   *
   * @param partitionId a partition, or null
   * @return the listing, later
   */
  public CompletableFuture<Map<String, Map<String, Map<String, Object>>>> listAsync(
      String partitionId) {
    return async(() -> list(partitionId));
  }

  /**
   * Removes keys: their stored cells first, then key, tags and status in the controller. Missing
   * keys and partitions are ignored; the partition itself stays.
   *
   * @param keys distinct keys, at least one
   * @param partitionId the partition
   */
  public void clear(List<String> keys, String partitionId) {
    checkKeys(keys);
    BatchMeta found = client.resolveKeys(partitionId, keys, false);
    if (found.isEmpty()) {
      return;
    }
    // The client removes every stored cell of the samples, whichever fields they have.
    client.clearSamples(found);
  }

  /**
   * Asynchronous {@link #clear}.
   *
   * @param keys the keys
   * @param partitionId the partition
   * @return completion
   */
  public CompletableFuture<Void> clearAsync(List<String> keys, String partitionId) {
    return async(
        () -> {
          clear(keys, partitionId);
          return null;
        });
  }

  /** Stops the executor of the asynchronous twins. Idempotent. */
  @Override
  public void close() {
    executor.close();
  }

  private <T> CompletableFuture<T> async(Supplier<T> call) {
    return CompletableFuture.supplyAsync(call, executor);
  }

  private static void checkKeys(List<String> keys) {
    Names.checkKeys(keys);
  }

  private static List<Map<String, Object>> freeze(List<? extends Map<String, ?>> tags) {
    List<Map<String, Object>> frozen = new ArrayList<>(tags.size());
    for (Map<String, ?> tag : tags) {
      frozen.add(MetaValues.freezeMap(tag));
    }
    return frozen;
  }

  private static boolean isEmpty(Map<?, ?> map) {
    return map == null || map.isEmpty();
  }

  /** A one-row batch over the caller's values: tensors as zero-copy views with a leading 1. */
  private static Batch oneRow(String key, Map<String, ?> fields) {
    Batch.Builder builder = Batch.builder().rowCount(1);
    List<String> names = new ArrayList<>(fields.keySet());
    Collections.sort(names);
    for (String name : names) {
      Object value = fields.get(name);
      if (value instanceof Tensor tensor) {
        long[] shape = tensor.shape();
        long[] withRow = new long[shape.length + 1];
        withRow[0] = 1;
        System.arraycopy(shape, 0, withRow, 1, shape.length);
        builder.add(name, new DenseColumn(Tensor.wrap(tensor.dtype(), tensor.segment(), withRow)));
      } else if (value instanceof Column) {
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "put of key '"
                + key
                + "': field '"
                + name
                + "' is a column; use batchPut with a Batch");
      } else {
        // The builder names the field when it refuses the value.
        builder.objects(name, Collections.singletonList(value));
      }
    }
    return builder.build();
  }
}
