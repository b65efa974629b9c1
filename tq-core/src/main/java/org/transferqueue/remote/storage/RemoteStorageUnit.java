package org.transferqueue.remote.storage;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.transferqueue.Closeables;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.codec.EncodedValue;
import org.transferqueue.codec.ValueEncoder;
import org.transferqueue.config.HostPort;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.remote.AsyncExchange;
import org.transferqueue.remote.CheckpointMessages;
import org.transferqueue.remote.CommonMessages;
import org.transferqueue.remote.RemoteCalls;
import org.transferqueue.remote.Wire;
import org.transferqueue.storage.checkpoint.FileDigest;
import org.transferqueue.storage.simple.StorageUnitStats;
import org.transferqueue.tensor.Batch;
import org.transferqueue.tensor.Column;
import org.transferqueue.tensor.DenseColumn;
import org.transferqueue.tensor.JaggedColumn;
import org.transferqueue.tensor.ObjectColumn;
import org.transferqueue.tensor.Tensor;
import org.transferqueue.transport.BodyDestination;
import org.transferqueue.transport.Request;
import org.transferqueue.transport.Response;
import org.transferqueue.transport.TransportClient;

/**
 * A client of one {@link StorageUnitServer}: the remote form of a storage unit.
 *
 * <p>A put is written with one gathering write straight from the caller's tensor rows (row slices
 * of its dense and jagged columns; object values are encoded, their nested tensors again sent from
 * their own memory). A get's reply bodies are read straight from the socket into buffers of the
 * given allocator ({@link UnitRows}). Every call ends by the deadline given at creation; errors of
 * the unit arrive as {@link StorageException}s with the unit's code.
 *
 * <p>Does not own the transport client. Thread-safe.
 */
public final class RemoteStorageUnit {
  private final AsyncExchange exchange;
  private final HostPort address;
  private final Duration timeout;

  /**
   * Creates the client.
   *
   * @param client the transport client the calls go through; not owned
   * @param address the unit server's address
   * @param timeout the deadline of each call
   */
  public RemoteStorageUnit(TransportClient client, HostPort address, Duration timeout) {
    this(Objects.requireNonNull(client, "client")::callAsync, address, timeout);
  }

  /** A proxy whose requests go through {@code exchange} (in-process in the protocol tests). */
  RemoteStorageUnit(AsyncExchange exchange, HostPort address, Duration timeout) {
    this.exchange = Objects.requireNonNull(exchange, "exchange");
    this.address = Objects.requireNonNull(address, "address");
    this.timeout = Objects.requireNonNull(timeout, "timeout");
  }

  /**
   * The unit server's address.
   *
   * @return the address
   */
  public HostPort address() {
    return address;
  }

  /**
   * Stores rows {@code positions} of {@code batch} as the cells of {@code gis}, atomically on the
   * unit.
   *
   * @param gis distinct global indexes, one per position
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown)
   * @param batch the data; borrowed until the returned future completes
   * @param positions rows of {@code batch}, aligned with {@code gis}
   * @param token 0 for a put that is kept at once; otherwise a token unique among this unit's held
   *     puts under which the unit holds the put for a later {@link #finishAsync} decision
   * @param allocator where encoded object columns are staged until the call ends (native memory the
   *     socket writes from without a further copy)
   * @return completes when the unit has committed, or fails with the unit's error
   */
  public CompletableFuture<Void> putAsync(
      long[] gis,
      long[] generations,
      Batch batch,
      int[] positions,
      long token,
      BufferAllocator allocator) {
    List<MemorySegment> bodies = new ArrayList<>();
    List<NativeBuffer> staged = new ArrayList<>();
    Request request;
    try {
      Wire.Writer out = new Wire.Writer().array(4).i64(token).longs(gis).longs(generations);
      out.array(batch.fields().size());
      for (String field : batch.fields()) {
        writeColumn(field, batch.column(field), positions, out, bodies, staged, allocator);
      }
      request = new Request(StorageUnitProtocol.PUT.typeId(), out.toBytes(), bodies);
    } catch (RuntimeException e) {
      Closeables.closeAll(staged);
      throw e;
    }
    CompletableFuture<Response> call = call(request, noBodies());
    if (!staged.isEmpty()) {
      // The staged frames are written by the transport until the call ends, in any way.
      call = call.whenComplete((r, e) -> Closeables.closeAll(staged));
    }
    return call.thenAccept(Response::close);
  }

  private static void writeColumn(
      String field,
      Column column,
      int[] positions,
      Wire.Writer out,
      List<MemorySegment> bodies,
      List<NativeBuffer> staged,
      BufferAllocator allocator) {
    switch (column) {
      case DenseColumn dense -> {
        Tensor tensor = dense.tensor();
        long rows = tensor.shape(0);
        long rowBytes = rows == 0 ? 0 : tensor.nbytes() / rows;
        long[] rowShape = dense.rowShape();
        out.array(4).str(field).i64(column.kind().ordinal()).str(dense.dtype().torchName());
        out.array(positions.length);
        for (int p : positions) {
          out.longs(rowShape);
          bodies.add(tensor.segment().asSlice(p * rowBytes, rowBytes));
        }
      }
      case JaggedColumn jagged -> {
        long elementBytes = jagged.dtype().byteSize();
        long[] offsets = jagged.offsets();
        MemorySegment values = jagged.values().segment();
        out.array(4).str(field).i64(column.kind().ordinal()).str(jagged.dtype().torchName());
        out.array(positions.length);
        for (int p : positions) {
          out.longs(jagged.rowShape(p));
          long from = offsets[p] * elementBytes;
          bodies.add(values.asSlice(from, offsets[p + 1] * elementBytes - from));
        }
      }
      case ObjectColumn objects -> {
        List<Object> values = new ArrayList<>(positions.length);
        for (int p : positions) {
          values.add(objects.get(p));
        }
        EncodedValue encoded = ValueEncoder.encodeColumn(values);
        NativeBuffer frame = encoded.copyMainFrame(allocator);
        staged.add(frame);
        out.array(4)
            .str(field)
            .i64(column.kind().ordinal())
            .i64(frame.lengthBytes())
            .i64(encoded.auxTensors().size());
        // The encoded values travel as a body, not as message metadata: a column of long strings
        // is payload and may be far larger than the metadata limit.
        bodies.add(frame.segment());
        for (Tensor aux : encoded.auxTensors()) {
          bodies.add(aux.segment());
        }
      }
    }
  }

  /**
   * Decides held puts: keeps them or takes them back.
   *
   * @param tokens tokens given to {@link #putAsync}; tokens the unit does not hold are ignored
   * @param rollback true to take the puts back, false to keep them
   * @return completes when the unit has decided
   */
  public CompletableFuture<Void> finishAsync(long[] tokens, boolean rollback) {
    byte[] meta = new StorageUnitProtocol.Finish(rollback, tokens).encode();
    return call(Request.of(StorageUnitProtocol.FINISH.typeId(), meta), noBodies())
        .thenAccept(Response::close);
  }

  /**
   * Reads the cells of {@code fields} x {@code gis}.
   *
   * @param gis the samples (repeats allowed)
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown)
   * @param fields the fields
   * @param allocator where the reply bodies are read into
   * @return completes with the rows, which the caller closes
   */
  public CompletableFuture<UnitRows> getAsync(
      long[] gis, long[] generations, List<String> fields, BufferAllocator allocator) {
    return getAsync(gis, generations, fields, BodyDestination.allocateFrom(allocator));
  }

  /**
   * Reads the cells of {@code fields} x {@code gis} with the reply bodies read straight into the
   * given destination, for example row slices of result tensors allocated from expected shapes
   * (field-major: every row of the first field, then of the second, ...).
   *
   * @param gis the samples (repeats allowed)
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown)
   * @param fields the fields
   * @param destination where the reply bodies go; with caller segments a reply whose bodies do not
   *     fit fails with {@code SHAPE_MISMATCH}
   * @return completes with the rows, which the caller closes
   */
  public CompletableFuture<UnitRows> getAsync(
      long[] gis, long[] generations, List<String> fields, BodyDestination destination) {
    byte[] meta = new StorageUnitProtocol.Get(gis, generations, fields).encode();
    return call(Request.of(StorageUnitProtocol.GET.typeId(), meta), destination)
        .thenApply(response -> UnitRows.parse(response, fields, gis.length, address));
  }

  /**
   * Removes every cell of the given samples, each up to the generation named.
   *
   * @param gis the samples
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown)
   * @return completes with the number of samples removed
   */
  public CompletableFuture<Long> clearAsync(long[] gis, long[] generations) {
    byte[] meta = new StorageUnitProtocol.Clear(gis, generations).encode();
    return call(Request.of(StorageUnitProtocol.CLEAR.typeId(), meta), noBodies())
        .thenApply(
            response -> {
              try (response) {
                return CommonMessages.count(response.metadata(), "CLEAR reply");
              }
            });
  }

  /**
   * The unit's occupancy now.
   *
   * @return the statistics
   * @throws TqException with the unit's or the transport's code
   */
  public StorageUnitStats stats() {
    byte[] meta = CommonMessages.noArguments();
    try (Response response =
        RemoteCalls.join(call(Request.of(StorageUnitProtocol.STATS.typeId(), meta), noBodies()))) {
      return StorageUnitProtocol.decodeStats(response.metadata());
    }
  }

  /**
   * Saves the unit's cells to {@code path} on the unit's host.
   *
   * @param path the checkpoint file on the unit's host; parent directories are created
   * @return completes with the file's size and CRC32C when written
   */
  public CompletableFuture<FileDigest> saveCheckpointAsync(String path) {
    byte[] meta = new CheckpointMessages.Save(path).encode();
    return call(Request.of(StorageUnitProtocol.SAVE_CHECKPOINT.typeId(), meta), noBodies())
        .thenApply(CheckpointMessages::digest);
  }

  /**
   * First phase of a checkpoint load: the unit reads and verifies {@code path} on its host and
   * stages its cells under {@code token}, changing nothing (see {@link
   * org.transferqueue.remote.StagedCheckpointLoads}).
   *
   * @param token the load's token
   * @param path the checkpoint file on the unit's host
   * @param expected the manifest's size and CRC32C of the file, or null to check its structure only
   * @return completes when staged
   */
  public CompletableFuture<Void> prepareLoadAsync(long token, String path, FileDigest expected) {
    byte[] meta = new CheckpointMessages.Prepare(token, path, expected).encode();
    return call(Request.of(StorageUnitProtocol.PREPARE_LOAD.typeId(), meta), noBodies())
        .thenAccept(Response::close);
  }

  /**
   * Second phase: the unit replaces its cells by the load staged under {@code token}.
   *
   * @param token the load's token
   * @return completes when applied
   */
  public CompletableFuture<Void> commitLoadAsync(long token) {
    byte[] meta = new CheckpointMessages.Token(token).encode();
    return call(Request.of(StorageUnitProtocol.COMMIT_LOAD.typeId(), meta), noBodies())
        .thenAccept(Response::close);
  }

  /**
   * Makes the unit discard the load staged under {@code token}, if any.
   *
   * @param token the load's token
   * @return completes when discarded
   */
  public CompletableFuture<Void> abortLoadAsync(long token) {
    byte[] meta = new CheckpointMessages.Token(token).encode();
    return call(Request.of(StorageUnitProtocol.ABORT_LOAD.typeId(), meta), noBodies())
        .thenAccept(Response::close);
  }

  private CompletableFuture<Response> call(Request request, BodyDestination destination) {
    return exchange
        .call(address, request, destination, timeout)
        .exceptionallyCompose(e -> CompletableFuture.failedFuture(RemoteCalls.storageError(e)));
  }

  private static BodyDestination noBodies() {
    return BodyDestination.into(List.of());
  }
}
