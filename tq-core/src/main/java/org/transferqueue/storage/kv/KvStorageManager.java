package org.transferqueue.storage.kv;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;
import java.util.stream.IntStream;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.meta.FieldSchema;
import org.transferqueue.storage.ClearResult;
import org.transferqueue.storage.DataParserReference;
import org.transferqueue.storage.FieldSchemas;
import org.transferqueue.storage.PartitionGroup;
import org.transferqueue.storage.ProductionNotifier;
import org.transferqueue.storage.ProductionUpdates;
import org.transferqueue.storage.PutResult;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.CheckpointDigests;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DType;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.tensor.TensorUtils;

/**
 * A {@link StorageManager} over a {@link KvClient}: every cell is one key, {@code
 * "<gi>.<generation>@<field>"} (see {@link KvKeys}). Every sample of a request must carry its
 * generation ({@link BatchMeta#generation}): the key of a cell names the sample, not only its
 * index, so a request through metadata from before a clear reaches the old sample's keys, never the
 * cells of the sample that reuses the index.
 *
 * <p><b>Put.</b> Cells are flattened field-major (fields in code-point order, samples in batch
 * order): a dense column gives its row views (a rank-1 column gives 0-d cells and is recorded with
 * shape {@code []}), a jagged column its rows, an object column its values. Tensor columns are
 * stored as tensor cells and object columns as object cells, whatever the runtime type of a value,
 * so that put and get always agree. The schema extracted from the data and the client's per-key
 * metadata (for example packed sizes) go to the controller through the {@link ProductionNotifier},
 * one update per partition.
 *
 * <p><b>Get.</b> Expected shapes, dtypes and per-key metadata come from the {@link BatchMeta}; the
 * columns are rebuilt by the schema's kind: regular -> dense (a shape {@code []} gives a 1-D
 * column), nested -> jagged, non-tensor -> object. The result is an independent copy.
 *
 * <p><b>Atomicity.</b> A put that fails in the client may leave some of its keys written (a
 * key-value store has no multi-key transaction); nothing is reported to the controller then, so the
 * cells stay invisible and a retried put overwrites them.
 *
 * <p>Thread-safe: the manager has no mutable state besides its closed flag; the client is
 * thread-safe. The manager owns the client and closes it.
 */
public final class KvStorageManager implements StorageManager {
  private static final System.Logger LOG = System.getLogger(KvStorageManager.class.getName());

  private final String backendName;
  private final KvClient client;
  private final ProductionNotifier notifier;
  private final Optional<Duration> requestTimeout;
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Creates a manager.
   *
   * @param backendName the configured backend name, such as {@code MooncakeStore}
   * @param client the client; the manager takes ownership and closes it
   * @param notifier where production updates go
   */
  public KvStorageManager(String backendName, KvClient client, ProductionNotifier notifier) {
    this(backendName, client, notifier, Optional.empty());
  }

  /**
   * Creates a manager whose client calls storage servers in other processes.
   *
   * @param backendName the configured backend name, such as {@code MooncakeStore}
   * @param client the client; the manager takes ownership and closes it
   * @param notifier where production updates go
   * @param requestTimeout the deadline of one operation of the client ({@link #requestTimeout()});
   *     empty when the client's store runs in this process
   */
  public KvStorageManager(
      String backendName,
      KvClient client,
      ProductionNotifier notifier,
      Optional<Duration> requestTimeout) {
    this.backendName = Objects.requireNonNull(backendName, "backendName");
    this.client = Objects.requireNonNull(client, "client");
    this.notifier = Objects.requireNonNull(notifier, "notifier");
    this.requestTimeout = Objects.requireNonNull(requestTimeout, "requestTimeout");
  }

  @Override
  public Optional<Duration> requestTimeout() {
    return requestTimeout;
  }

  @Override
  public String backendName() {
    return backendName;
  }

  /** True: a key-value store removes exact keys, one per field and sample. */
  @Override
  public boolean clearsByField() {
    return true;
  }

  @Override
  public PutResult put(Batch batch, BatchMeta meta) {
    Objects.requireNonNull(batch, "batch");
    Objects.requireNonNull(meta, "meta");
    checkOpen();
    int n = meta.size();
    FieldSchemas.requireMatchingSize(batch, meta);
    if (n == 0) {
      LOG.log(System.Logger.Level.WARNING, "put of an empty batch: nothing stored or notified");
      return new PutResult(new TreeMap<>(), List.of());
    }
    long[] gis = meta.globalIndexArray();
    FieldSchemas.requireDistinctIndexes(gis);
    long[] generations =
        knownGenerations(
            meta,
            i ->
                new TqException(
                    ErrorCode.INVALID_ARGUMENT,
                    "sample "
                        + gis[i]
                        + " of partition '"
                        + meta.partitionId(i)
                        + "' has no known generation: a key-value backend stores the cells of a"
                        + " sample under its index and generation (is it a sample of that"
                        + " partition?)"));
    SortedMap<String, FieldSchema> schema = FieldSchemas.extract(batch);
    FieldSchemas.requireCompatible(meta, schema);
    List<String> fields = KvKeys.sortedFields(batch.fields());
    List<String> keys = KvKeys.keys(fields, gis, generations);
    List<Column> columns = new ArrayList<>(fields.size());
    List<MemorySegment> regions = new ArrayList<>(fields.size());
    for (String field : fields) {
      Column column = batch.column(field);
      columns.add(column);
      switch (column) {
        case DenseColumn dense -> regions.add(dense.tensor().segment());
        case JaggedColumn jagged -> regions.add(jagged.values().segment());
        case ObjectColumn objects -> {}
      }
    }
    // The cells are views over the columns: a client that only needs a tensor cell's bytes takes
    // them without a tensor view per row.
    KvCellValues values = new KvCellValues(columns, n);
    List<Map<String, Object>> keyMeta = client.put(keys, values, values.kinds(), regions);
    List<Map<String, Object>> backendMeta = perSample(keyMeta, fields, n, keys.size());
    for (PartitionGroup group : PartitionGroup.of(meta)) {
      ProductionUpdates.publish(notifier, ProductionUpdates.of(meta, group, schema, backendMeta));
    }
    return new PutResult(schema, backendMeta);
  }

  /**
   * Rejects the parser before touching storage: key-value backends do not run data parsers.
   *
   * @throws StorageException with {@code UNSUPPORTED_OPERATION}
   */
  @Override
  public PutResult put(Batch batch, BatchMeta meta, DataParserReference parser) {
    throw new StorageException(
        ErrorCode.UNSUPPORTED_OPERATION,
        "data_parser is not supported for key-value backend "
            + backendName
            + " (parser '"
            + (parser == null ? null : parser.name())
            + "')");
  }

  private static List<Map<String, Object>> perSample(
      List<Map<String, Object>> keyMeta, List<String> fields, int n, int keyCount) {
    if (keyMeta == null || keyMeta.isEmpty()) {
      return List.of();
    }
    if (keyMeta.size() != keyCount) {
      throw new StorageException(
          ErrorCode.STORAGE_ERROR,
          "Length of custom_backend_meta ("
              + keyMeta.size()
              + ") does not match expected ("
              + keyCount
              + ")");
    }
    // A sample without any entry (only tensor cells) shares the empty map.
    List<Map<String, Object>> rows = new ArrayList<>(Collections.nCopies(n, null));
    boolean any = false;
    for (int f = 0; f < fields.size(); f++) {
      for (int i = 0; i < n; i++) {
        Map<String, Object> entry = keyMeta.get(f * n + i);
        if (entry != null) {
          if (rows.get(i) == null) {
            rows.set(i, new LinkedHashMap<>());
          }
          rows.get(i).put(fields.get(f), entry);
          any = true;
        }
      }
    }
    if (!any) {
      return Collections.nCopies(n, Collections.emptyMap());
    }
    for (int i = 0; i < n; i++) {
      Map<String, Object> row = rows.get(i);
      rows.set(i, row == null ? Collections.emptyMap() : Collections.unmodifiableMap(row));
    }
    return Collections.unmodifiableList(rows);
  }

  /**
   * The generations of {@code meta}'s samples: every cell key names one.
   *
   * @param unknown the error for the first sample whose generation is unknown, by position
   */
  private static long[] knownGenerations(BatchMeta meta, IntFunction<TqException> unknown) {
    long[] generations = meta.generationArray();
    for (int i = 0; i < generations.length; i++) {
      if (generations[i] == BatchMeta.UNKNOWN_GENERATION) {
        throw unknown.apply(i);
      }
    }
    return generations;
  }

  @Override
  public Batch get(BatchMeta meta, BufferAllocator allocator) {
    Objects.requireNonNull(meta, "meta");
    Objects.requireNonNull(allocator, "allocator");
    checkOpen();
    int n = meta.size();
    List<String> fields = KvKeys.sortedFields(meta.fieldNames());
    if (n == 0 || fields.isEmpty()) {
      if (n > 0) {
        LOG.log(System.Logger.Level.WARNING, "get without fields: empty batch of " + n + " rows");
      }
      return Batch.builder().rowCount(n).build();
    }
    long[] gis = meta.globalIndexArray();
    long[] generations =
        knownGenerations(
            meta,
            i ->
                new StorageException(
                    ErrorCode.NOT_FOUND,
                    "sample "
                        + gis[i]
                        + " of partition '"
                        + meta.partitionId(i)
                        + "' not found (its metadata names no generation, and it is no sample of"
                        + " that partition)"));
    Map<String, Column> columns = new LinkedHashMap<>();
    try {
      readTensorFields(meta, fields, gis, generations, allocator, columns);
      readObjectFields(meta, fields, gis, generations, allocator, columns);
    } catch (RuntimeException | Error e) {
      columns.values().forEach(Column::close);
      throw e;
    }
    Batch.Builder builder = Batch.builder().rowCount(n);
    for (String field : fields) {
      builder.add(field, columns.get(field));
    }
    return builder.build();
  }

  /**
   * Allocates every tensor field's result column from the expected shapes and has the client read
   * each cell straight into its row: one copy from the store into the caller's batch.
   */
  private void readTensorFields(
      BatchMeta meta,
      List<String> fields,
      long[] gis,
      long[] generations,
      BufferAllocator allocator,
      Map<String, Column> columns) {
    int cells = fields.size() * gis.length;
    List<String> keys = new ArrayList<>(cells);
    List<long[]> shapes = new ArrayList<>(cells);
    List<DType> dtypes = new ArrayList<>(cells);
    List<MemorySegment> destinations = new ArrayList<>(cells);
    List<MemorySegment> regions = new ArrayList<>(fields.size());
    List<String> tensorFields = new ArrayList<>(fields.size());
    for (String field : fields) {
      FieldSchema schema = meta.field(field);
      if (schema.nonTensor()) {
        continue;
      }
      tensorFields.add(field);
      int first = shapes.size();
      expected(meta, field, gis, shapes, dtypes);
      List<long[]> rowShapes = shapes.subList(first, shapes.size());
      long[] rowBytes = new long[gis.length];
      long total = 0;
      for (int i = 0; i < gis.length; i++) {
        rowBytes[i] = TensorUtils.nbytes(schema.dtype(), rowShapes.get(i));
        total += rowBytes[i];
      }
      Column column = allocateColumn(schema, rowShapes, total, allocator);
      columns.put(field, column);
      MemorySegment region =
          column instanceof DenseColumn dense
              ? dense.tensor().segment()
              : ((JaggedColumn) column).values().segment();
      regions.add(region);
      long offset = 0;
      for (int i = 0; i < gis.length; i++) {
        destinations.add(region.asSlice(offset, rowBytes[i]));
        offset += rowBytes[i];
      }
      KvKeys.addKeys(field, gis, generations, keys);
    }
    if (tensorFields.isEmpty()) {
      return;
    }
    client.getInto(
        keys, shapes, dtypes, backendMetaList(meta, tensorFields), destinations, regions);
  }

  private static Column allocateColumn(
      FieldSchema schema, List<long[]> rowShapes, long totalBytes, BufferAllocator allocator) {
    DType dtype = schema.dtype();
    if (schema.nested()) {
      // fromValues owns the values from here on, also when it rejects the shapes.
      return JaggedColumn.fromValues(
          Tensor.allocate(allocator, dtype, totalBytes / dtype.byteSize()), rowShapes);
    }
    long[] rowShape = schema.shape().stream().mapToLong(Long::longValue).toArray();
    long[] shape = new long[rowShape.length + 1];
    shape[0] = rowShapes.size();
    System.arraycopy(rowShape, 0, shape, 1, rowShape.length);
    return new DenseColumn(Tensor.allocate(allocator, dtype, shape));
  }

  /** Reads every object field through the packed path and copies the values out of its buffers. */
  private void readObjectFields(
      BatchMeta meta,
      List<String> fields,
      long[] gis,
      long[] generations,
      BufferAllocator allocator,
      Map<String, Column> columns) {
    List<String> objectFields = fields.stream().filter(f -> meta.field(f).nonTensor()).toList();
    if (objectFields.isEmpty()) {
      return;
    }
    List<String> keys = KvKeys.keys(objectFields, gis, generations);
    List<long[]> shapes = new ArrayList<>(keys.size());
    List<DType> dtypes = new ArrayList<>(keys.size());
    for (String field : objectFields) {
      expected(meta, field, gis, shapes, dtypes);
    }
    try (KvValues read = client.get(keys, shapes, dtypes, backendMetaList(meta, objectFields))) {
      if (read.size() != keys.size()) {
        throw new StorageException(
            ErrorCode.STORAGE_ERROR,
            "Length of values (" + read.size() + ") does not match expected (" + keys.size() + ")");
      }
      int n = gis.length;
      int[] all = IntStream.range(0, n).toArray();
      for (int f = 0; f < objectFields.size(); f++) {
        List<Object> cells = read.values().subList(f * n, (f + 1) * n);
        columns.put(objectFields.get(f), new ObjectColumn(cells).selectRows(allocator, all));
      }
    }
  }

  private static void expected(
      BatchMeta meta, String field, long[] gis, List<long[]> shapes, List<DType> dtypes) {
    FieldSchema schema = meta.field(field);
    long[] fixedShape = null;
    for (int i = 0; i < gis.length; i++) {
      if (schema.nonTensor()) {
        shapes.add(null);
        dtypes.add(null);
        continue;
      }
      if (schema.dtype() == null) {
        // An insert placeholder: the partition had no data of the field when the metadata was
        // made. Like a storage unit, report the absent cell; the client names the field unknown
        // when the partition still has no column of it.
        throw new StorageException(
            ErrorCode.NOT_FOUND,
            "key " + gis[i] + " not found in field '" + field + "' (placeholder schema, no data)");
      }
      if (!schema.nested()) {
        if (fixedShape == null) {
          fixedShape = toArray(Objects.requireNonNull(schema.shape()));
        }
        shapes.add(fixedShape); // one array for every row of the field: nothing mutates it
        dtypes.add(schema.dtype());
        continue;
      }
      List<Long> shape = schema.perSampleShapes().get(i);
      if (shape == null) {
        throw new StorageException(
            ErrorCode.NOT_FOUND, "no recorded shape of field '" + field + "' for sample " + gis[i]);
      }
      shapes.add(toArray(shape));
      dtypes.add(schema.dtype());
    }
  }

  private static long[] toArray(List<Long> shape) {
    long[] dims = new long[shape.size()];
    for (int d = 0; d < dims.length; d++) {
      dims[d] = shape.get(d);
    }
    return dims;
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> backendMetaList(BatchMeta meta, List<String> fields) {
    int n = meta.size();
    List<Map<String, Object>> list = new ArrayList<>(n * fields.size());
    for (String field : fields) {
      for (int i = 0; i < n; i++) {
        Object entry = meta.backendMeta(i).get(field);
        if (entry != null && !(entry instanceof Map)) {
          throw new TqException(
              ErrorCode.INVALID_ARGUMENT,
              "backend metadata of field '"
                  + field
                  + "' for sample "
                  + meta.globalIndex(i)
                  + " is not a map: "
                  + entry);
        }
        list.add((Map<String, Object>) entry);
      }
    }
    return Collections.unmodifiableList(list);
  }

  /**
   * Removes the cells of {@code meta.fieldNames()} for the samples of {@code meta}. A key-value
   * store removes exact keys: the caller names every field stored for the samples. Metadata that
   * names no field (samples that hold no cell yet, or only tags) has nothing to remove; a sample
   * whose generation is unknown names no keys and is skipped.
   */
  @Override
  public ClearResult clear(BatchMeta meta) {
    Objects.requireNonNull(meta, "meta");
    checkOpen();
    int n = meta.size();
    if (n == 0 || meta.fieldNames().isEmpty()) {
      return ClearResult.complete(n);
    }
    List<Integer> known = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      if (meta.generation(i) != BatchMeta.UNKNOWN_GENERATION) {
        known.add(i);
      }
    }
    BatchMeta addressed = known.size() == n ? meta : meta.selectSamples(known);
    int m = addressed.size();
    if (m == 0) {
      return ClearResult.complete(0);
    }
    List<String> fields = KvKeys.sortedFields(addressed.fieldNames());
    long[] gis = addressed.globalIndexArray();
    List<String> keys = KvKeys.keys(fields, gis, addressed.generationArray());
    Map<String, Integer> failed = client.clear(keys, backendMetaList(addressed, fields));
    if (failed.isEmpty()) {
      return ClearResult.complete(m);
    }
    Set<Long> failedGis = new LinkedHashSet<>();
    for (int k = 0; k < keys.size(); k++) {
      if (failed.containsKey(keys.get(k))) {
        failedGis.add(gis[k % m]);
      }
    }
    return new ClearResult(
        m - failedGis.size(),
        List.of(
            new ClearResult.Failure(
                backendName, List.copyOf(failedGis), "remove failed for keys " + failed)));
  }

  /**
   * Saves every stored key through the client ({@link KvClient#saveCheckpoint}). The keys' backend
   * metadata lives in the controller state, which the caller saves.
   */
  @Override
  public void saveCheckpoint(Path directory, CheckpointDigests digests) {
    checkOpen();
    client.saveCheckpoint(directory, digests);
  }

  /** Stages a checkpoint through the client ({@link KvClient#prepareLoadCheckpoint}). */
  @Override
  public PreparedLoad prepareLoadCheckpoint(Path directory, CheckpointDigests digests) {
    checkOpen();
    return client.prepareLoadCheckpoint(directory, digests);
  }

  /** Closes the client. Idempotent. */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      client.close();
    }
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new TqException(ErrorCode.CLOSED, backendName + " storage manager is closed");
    }
  }
}
