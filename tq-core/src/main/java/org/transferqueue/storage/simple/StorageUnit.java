package org.transferqueue.storage.simple;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntSupplier;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.storage.FieldSchemas;
import org.transferqueue.storage.StorageManager;
import org.transferqueue.storage.checkpoint.FileDigest;
import org.transferqueue.tensor.Batch;

/**
 * One storage unit of SimpleStorage: a 2-D store (global index x field) of off-heap cells.
 *
 * <p>Design note. Cells are written by a put into fresh {@link CellBlock}s outside any lock (the
 * only copy of the caller's bytes); the put is then <em>committed</em> under the write lock by
 * pointing the (sample slot, field) entries at the new blocks. The commit is the linearisation
 * point of a put, and it either installs every cell of the request or none (capacity is checked
 * inside it). A get takes the read lock only to look up and {@link CellBlock#retain() retain} the
 * blocks of the requested cells, and copies the bytes after releasing it; since blocks never change
 * once published, a get sees for every cell either the bytes of one complete put or those of
 * another, never a mix, and for all the cells of one request the state of one instant. Last commit
 * wins per cell. A commit returns a {@link PutUndo} so that a request spanning several units (or
 * whose notification fails) can take the put back.
 *
 * <pre>
 *   slots:  gi -> slot (SampleSlots)          fields: name -> FieldCells
 *   FieldCells.blocks[slot], FieldCells.rows[slot] = the cell (block, row in block), or null
 * </pre>
 *
 * <p><b>Generations.</b> Every held sample records the generation of the metadata that wrote it
 * (see {@link org.transferqueue.meta.BatchMeta#generation}). A put of an older generation than the
 * one held is refused with {@code STALE_METADATA} (its writer's metadata predates a clear); a put
 * of a newer one replaces the whole sample, whose cells belong to a sample that no longer exists
 * (its clear did not reach this unit). A get is refused with {@code STALE_METADATA} when the unit
 * holds a newer generation than the one asked for, and finds nothing when it holds an older one; a
 * clear removes a sample only up to the generation it names. {@code -1} (unknown) matches any
 * generation.
 *
 * <p>Capacity counts distinct samples, not cells; overwriting a held sample never needs capacity.
 * Memory comes from the unit's own allocator, a child of the one given at creation, which the unit
 * owns and closes. Thread-safe.
 */
public final class StorageUnit implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger(StorageUnit.class.getName());

  private final String id;
  private final long capacity;
  private final BufferAllocator allocator;
  private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();

  // Guarded by lock.
  private final SampleSlots slots = new SampleSlots();
  // The generation of the sample held in each slot; -1 when its writer did not know it.
  private long[] generationOf = new long[16];
  private final Map<String, FieldCells> fields = new HashMap<>();
  private long cellCount;
  private boolean closed;

  // Set once recovery has rebuilt the unit; null while it replays and without durability.
  private volatile UnitJournal journal;

  /**
   * Creates a unit with its own child allocator.
   *
   * @param id the unit's id, used in messages and checkpoints
   * @param capacitySamples the most distinct samples the unit holds; {@link OptionalLong#empty()}
   *     for unlimited
   * @param parent the allocator the unit's child allocator is created under
   * @param limitBytes the byte limit of the unit's allocator
   * @throws TqException with {@code INVALID_ARGUMENT} for a capacity below 1
   */
  public StorageUnit(
      String id, OptionalLong capacitySamples, BufferAllocator parent, long limitBytes) {
    this.id = Objects.requireNonNull(id, "id");
    Objects.requireNonNull(capacitySamples, "capacitySamples");
    if (capacitySamples.isPresent() && capacitySamples.getAsLong() < 1) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "storage unit " + id + ": capacitySamples=" + capacitySamples.getAsLong() + " < 1");
    }
    this.capacity = capacitySamples.orElse(Long.MAX_VALUE);
    this.allocator = parent.newChildAllocator("storage-unit:" + id, limitBytes);
  }

  /**
   * The unit's id.
   *
   * @return the id given at creation
   */
  public String id() {
    return id;
  }

  /**
   * The unit's allocator, where its cell blocks are allocated. A buffer from it whose bytes are the
   * rows of a {@link CellColumn} may be handed to {@link #putCells} as the column's backing, which
   * the unit then keeps instead of copying the rows (the caller still releases its own reference).
   *
   * @return the allocator, owned by the unit
   */
  public BufferAllocator allocator() {
    return allocator;
  }

  /**
   * Stores row {@code j} of every column of {@code rows} as the cell (gis[j], field), atomically:
   * either every cell is written or, on an error, none.
   *
   * @param gis distinct global indexes, one per row
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown)
   * @param rows the data (only read; not closed)
   * @throws StorageException with {@code SHAPE_MISMATCH} if the row count differs from the index
   *     count, {@code DUPLICATE_KEY} for a repeated index, {@code STALE_METADATA} for a sample
   *     older than the one held, {@code CAPACITY_EXCEEDED} if the new samples do not fit, {@code
   *     OUT_OF_MEMORY} if the unit's allocator is full
   */
  public void put(long[] gis, long[] generations, Batch rows) {
    if (rows.rowCount() != gis.length) {
      String field = rows.fields().isEmpty() ? "" : rows.fields().getFirst();
      throw new StorageException(
          ErrorCode.SHAPE_MISMATCH,
          "StorageUnitData put_data: field '"
              + field
              + "' values length "
              + rows.rowCount()
              + " != global_indexes length "
              + gis.length
              + ", length mismatch");
    }
    FieldSchemas.requireDistinctIndexes(gis);
    requireAligned(gis, generations);
    checkCapacity(gis, generations);
    String[] fieldNames = rows.fields().toArray(String[]::new);
    int[] positions = new int[gis.length];
    for (int j = 0; j < positions.length; j++) {
      positions[j] = j;
    }
    CellBlock[] blocks = new CellBlock[fieldNames.length];
    try {
      for (int f = 0; f < fieldNames.length; f++) {
        blocks[f] =
            CellBlock.copyOf(allocator, fieldNames[f], rows.column(fieldNames[f]), positions);
      }
    } catch (RuntimeException e) {
      releaseAll(blocks);
      throw e;
    }
    try (StagedPut staged = new StagedPut(this, 0, gis, generations, fieldNames, blocks)) {
      staged.commit().close(); // keep the put: nothing else can fail after the commit
    }
  }

  /**
   * Reads the cells of {@code fieldNames} x {@code gis} as one batch, rows in {@code gis} order,
   * columns in {@code fieldNames} order, of the kinds the cells were put with.
   *
   * @param gis the samples (repeats allowed)
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown)
   * @param fieldNames the fields
   * @param resultAllocator where the result's memory comes from
   * @return an independent batch the caller owns
   * @throws StorageException with {@code STALE_METADATA} for a sample the unit holds in a newer
   *     generation, {@code UNKNOWN_FIELD} or {@code NOT_FOUND} for a missing cell, {@code
   *     SCHEMA_CONFLICT} if a field's cells cannot form one column
   */
  public Batch get(
      long[] gis, long[] generations, List<String> fieldNames, BufferAllocator resultAllocator) {
    if (gis.length == 0 || fieldNames.isEmpty()) {
      return Batch.builder().rowCount(gis.length).build();
    }
    int[] positions = new int[gis.length];
    for (int j = 0; j < positions.length; j++) {
      positions[j] = j;
    }
    List<RoutingGroup> groups = List.of(new RoutingGroup(0, gis, positions));
    try (CellSnapshot snapshot = snapshot(gis, generations, fieldNames)) {
      return ColumnPacker.packBatch(
          fieldNames,
          gis.length,
          groups,
          List.of(snapshot),
          resultAllocator,
          copies -> copies.forEach(IntSupplier::getAsInt));
    }
  }

  /**
   * Stores cells given row by row (as received over the network), atomically, and holds the outcome
   * for the caller to decide: row {@code j} of every column becomes the cell (gis[j], field). Each
   * byte is copied once, from the given row segments into the unit's memory.
   *
   * @param gis distinct global indexes, one per row
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown)
   * @param columns the cells of each field, each with {@code gis.length} rows (only read)
   * @return the committed put; the caller keeps it with {@link HeldPut#close()} or takes it back
   *     with {@link HeldPut#rollback()}
   * @throws StorageException with {@code SHAPE_MISMATCH} if a column's row count differs from the
   *     index count, {@code DUPLICATE_KEY} for a repeated index or field, {@code STALE_METADATA}
   *     for a sample older than the one held, {@code CAPACITY_EXCEEDED} if the new samples do not
   *     fit, {@code OUT_OF_MEMORY} if the unit's allocator is full; on an error nothing was written
   */
  public HeldPut putCells(long[] gis, long[] generations, List<CellColumn> columns) {
    String[] fieldNames = new String[columns.size()];
    for (int f = 0; f < fieldNames.length; f++) {
      CellColumn column = columns.get(f);
      if (column.rowCount() != gis.length) {
        throw new StorageException(
            ErrorCode.SHAPE_MISMATCH,
            "StorageUnitData put_data: field '"
                + column.field()
                + "' values length "
                + column.rowCount()
                + " != global_indexes length "
                + gis.length
                + ", length mismatch");
      }
      fieldNames[f] = column.field();
    }
    if (new java.util.HashSet<>(Arrays.asList(fieldNames)).size() != fieldNames.length) {
      throw new StorageException(
          ErrorCode.DUPLICATE_KEY, "field names repeat: " + Arrays.toString(fieldNames));
    }
    FieldSchemas.requireDistinctIndexes(gis);
    requireAligned(gis, generations);
    checkCapacity(gis, generations);
    int[] positions = new int[gis.length];
    for (int j = 0; j < positions.length; j++) {
      positions[j] = j;
    }
    CellBlock[] blocks = new CellBlock[fieldNames.length];
    try {
      for (int f = 0; f < fieldNames.length; f++) {
        CellColumn column = columns.get(f);
        blocks[f] =
            column.kind() == org.transferqueue.tensor.ColumnKind.OBJECT
                ? CellBlock.freezeObjects(allocator, column.values(), positions, fieldNames[f])
                : CellBlock.copyRows(allocator, column);
      }
    } catch (RuntimeException e) {
      releaseAll(blocks);
      throw e;
    }
    try (StagedPut staged = new StagedPut(this, 0, gis, generations, fieldNames, blocks)) {
      return new HeldPut(staged.commit());
    }
  }

  /**
   * Reads the cells of {@code fieldNames} x {@code gis} without copying them, as of one instant.
   *
   * @param gis the samples (repeats allowed)
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown)
   * @param fieldNames the fields
   * @return the cells, retained until the caller closes them
   * @throws StorageException with {@code STALE_METADATA} for a sample the unit holds in a newer
   *     generation, {@code UNKNOWN_FIELD} or {@code NOT_FOUND} for a missing cell
   */
  public UnitCells readCells(long[] gis, long[] generations, List<String> fieldNames) {
    return new UnitCells(snapshot(gis, generations, fieldNames), fieldNames);
  }

  private static void requireAligned(long[] gis, long[] generations) {
    if (generations.length != gis.length) {
      throw new StorageException(
          ErrorCode.SHAPE_MISMATCH,
          generations.length + " generations for " + gis.length + " global indexes");
    }
  }

  private static void releaseAll(CellBlock[] blocks) {
    for (CellBlock block : blocks) {
      if (block != null) {
        block.release();
      }
    }
  }

  /**
   * Fails fast, before any bytes are copied, when a put of these samples cannot fit. The commit
   * checks again, authoritatively.
   */
  void checkCapacity(long[] gis, long[] generations) {
    lock.readLock().lock();
    try {
      ensureOpen();
      requireCurrent(gis, generations);
      requireRoom(gis);
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Refuses a put of a sample older than the one held.
   *
   * @throws StorageException with {@code STALE_METADATA} naming the first such sample
   */
  private void requireCurrent(long[] gis, long[] generations) {
    for (int j = 0; j < gis.length; j++) {
      int slot = slots.get(gis[j]);
      if (slot >= 0 && older(generations[j], generationOf[slot])) {
        throw stale(gis[j], generations[j], generationOf[slot], "written");
      }
    }
  }

  /** Whether a known generation is older than a known held one. */
  private static boolean older(long generation, long held) {
    return generation >= 0 && held >= 0 && generation < held;
  }

  private StorageException stale(long gi, long generation, long held, String what) {
    return new StorageException(
        ErrorCode.STALE_METADATA,
        "stale metadata: sample "
            + gi
            + " of generation "
            + generation
            + " cannot be "
            + what
            + ": storage unit "
            + id
            + " holds generation "
            + held
            + " of that index (it was cleared and reused since); fetch fresh metadata");
  }

  private void requireRoom(long[] gis) {
    if (capacity == Long.MAX_VALUE) {
      return;
    }
    long fresh = 0;
    for (long gi : gis) {
      if (slots.get(gi) < 0) {
        fresh++;
      }
    }
    long held = slots.size();
    if (held + fresh > capacity) {
      throw new StorageException(
          ErrorCode.CAPACITY_EXCEEDED,
          "Storage capacity exceeded: "
              + held
              + " existing + "
              + fresh
              + " new > "
              + capacity
              + " (storage unit "
              + id
              + ")");
    }
  }

  /**
   * Installs staged blocks as the current cells of {@code gis}: row {@code j} of {@code blocks[f]}
   * becomes the cell (gis[j], fieldNames[f]). On success the unit holds the blocks' references (the
   * caller's are transferred); on failure nothing changed and the caller still owns them.
   *
   * @param gis distinct global indexes
   * @param fieldNames the fields written
   * @param blocks one block per field, each with {@code gis.length} rows
   * @return the record of what was replaced; the caller must roll it back or close it
   * @throws StorageException with {@code CAPACITY_EXCEEDED} if the new samples do not fit
   */
  PutUndo commit(long[] gis, long[] generations, String[] fieldNames, CellBlock[] blocks) {
    UnitJournal journaled = journal;
    UnitRecords.Prepared record =
        journaled == null ? null : UnitRecords.put(gis, generations, fieldNames, blocks);
    CompletableFuture<Long> appended = null;
    CommittedPut put;
    lock.writeLock().lock();
    try {
      ensureOpen();
      requireCurrent(gis, generations);
      requireRoom(gis);
      if (record != null) {
        UnitRecords.Prepared numbered = record;
        record = null; // the journal releases it from here on
        appended = journaled.append(numbered);
      }
      int k = gis.length;
      boolean[] createdSample = new boolean[k];
      int[] slotOf = new int[k];
      for (int j = 0; j < k; j++) {
        int held = slots.get(gis[j]);
        if (held >= 0 && older(generationOf[held], generations[j])) {
          // The held cells belong to a sample that was cleared: the new one starts empty.
          dropCells(held);
          held = -1;
        }
        createdSample[j] = held < 0;
        slotOf[j] = slots.getOrAssign(gis[j]);
        if (slotOf[j] >= generationOf.length) {
          generationOf = Arrays.copyOf(generationOf, Math.max(slots.slotBound(), slotOf[j] + 1));
        }
        if (createdSample[j] || generations[j] >= 0) {
          generationOf[slotOf[j]] = generations[j];
        }
      }
      FieldCells.Replaced[] replaced = new FieldCells.Replaced[fieldNames.length];
      for (int f = 0; f < fieldNames.length; f++) {
        FieldCells cells = fields.get(fieldNames[f]);
        boolean createdField = cells == null;
        if (createdField) {
          cells = new FieldCells();
          fields.put(fieldNames[f], cells);
        }
        cells.ensureSlots(slots.slotBound());
        replaced[f] = cells.install(slotOf, blocks[f], createdField);
        cellCount += replaced[f].added();
      }
      put = new CommittedPut(this, gis, createdSample, fieldNames, blocks, replaced);
    } finally {
      lock.writeLock().unlock();
      if (record != null) {
        record.release(); // refused before it was appended
      }
    }
    if (appended != null) {
      try {
        journaled.awaitDurable(appended);
      } catch (RuntimeException e) {
        put.rollback();
        throw e;
      }
    }
    return put;
  }

  /**
   * Takes back a put of {@link #commit}, unless the unit is closed; see {@link CommittedPut}. With
   * a journal, the rollback's effects are journaled and durable when this returns; a journal
   * failure is logged (the unit's memory is rolled back either way).
   */
  void rollback(CommittedPut put) {
    UnitJournal journaled = journal;
    CompletableFuture<Long> appended = null;
    lock.writeLock().lock();
    try {
      if (!closed) {
        UnitRecords.Restored restored = journaled == null ? null : new UnitRecords.Restored();
        cellCount -= put.restore(slots, fields, restored);
        if (restored != null && !restored.isEmpty()) {
          appended = journaled.append(UnitRecords.restore(restored));
        }
      }
    } catch (TqException e) {
      LOG.log(System.Logger.Level.ERROR, "storage unit " + id + ": rollback not journaled", e);
    } finally {
      lock.writeLock().unlock();
    }
    if (appended != null) {
      try {
        journaled.awaitDurable(appended);
      } catch (TqException e) {
        LOG.log(System.Logger.Level.ERROR, "storage unit " + id + ": rollback not durable", e);
      }
    }
  }

  /**
   * Replays the effects of a journaled rollback (recovery only): each listed cell is set to the
   * given block's row 0 or removed, then fields and samples left empty are removed.
   */
  void applyRestore(UnitRecords.Restored restored) {
    lock.writeLock().lock();
    try {
      ensureOpen();
      for (int i = 0; i < restored.gis.size(); i++) {
        long gi = restored.gis.get(i);
        int slot = slots.get(gi);
        CellBlock block = restored.blocks.get(i);
        if (slot < 0) {
          if (block == null) {
            continue;
          }
          slot = slots.getOrAssign(gi);
          if (slot >= generationOf.length) {
            generationOf = Arrays.copyOf(generationOf, Math.max(slots.slotBound(), slot + 1));
          }
          generationOf[slot] = -1;
        }
        FieldCells cells = fields.computeIfAbsent(restored.fields.get(i), name -> new FieldCells());
        cells.ensureSlots(slots.slotBound());
        if (cells.clearSlot(slot)) {
          cellCount--;
        }
        if (block != null) {
          block.retain();
          cells.blocks[slot] = block;
          cells.rows[slot] = 0;
          cells.held++;
          cellCount++;
        }
      }
      for (String name : restored.removedFields) {
        FieldCells cells = fields.get(name);
        if (cells != null && cells.held == 0) {
          fields.remove(name);
        }
      }
      for (long gi : restored.removedSamples) {
        int slot = slots.get(gi);
        if (slot >= 0 && holdsNothing(slot)) {
          slots.remove(gi);
        }
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  private boolean holdsNothing(int slot) {
    for (FieldCells cells : fields.values()) {
      if (cells.block(slot) != null) {
        return false;
      }
    }
    return true;
  }

  /**
   * Looks up the cells of {@code fields} x {@code gis} and retains their blocks, as of one instant.
   *
   * @param gis the samples in request order (repeats allowed)
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown)
   * @param fieldNames the fields
   * @return the cells; the caller must close the snapshot
   * @throws StorageException with {@code STALE_METADATA} for a sample held in a newer generation,
   *     {@code UNKNOWN_FIELD} for a field the unit never held, {@code NOT_FOUND} for a sample
   *     without a cell in a field (or held only in an older generation)
   */
  CellSnapshot snapshot(long[] gis, long[] generations, List<String> fieldNames) {
    requireAligned(gis, generations);
    CellSnapshot snapshot = new CellSnapshot(fieldNames.size(), gis.length);
    lock.readLock().lock();
    try {
      ensureOpen();
      for (int j = 0; j < gis.length; j++) {
        int slot = slots.get(gis[j]);
        if (slot >= 0 && older(generations[j], generationOf[slot])) {
          throw stale(gis[j], generations[j], generationOf[slot], "read");
        }
      }
      FieldCells[] columns = new FieldCells[fieldNames.size()];
      for (int f = 0; f < columns.length; f++) {
        columns[f] = fields.get(fieldNames.get(f));
        if (columns[f] == null) {
          throw new StorageException(
              ErrorCode.UNKNOWN_FIELD,
              "StorageUnitData get_data: field '"
                  + fieldNames.get(f)
                  + "' not found. Available: "
                  + new TreeSet<>(fields.keySet())
                  + " (storage unit "
                  + id
                  + ")");
        }
      }
      int[] slotOf = new int[gis.length];
      for (int j = 0; j < gis.length; j++) {
        slotOf[j] = slots.get(gis[j]);
        if (slotOf[j] >= 0 && older(generationOf[slotOf[j]], generations[j])) {
          slotOf[j] = -1; // an older sample's cells: the one asked for has none here
        }
      }
      // Field-major, so that consecutive cells mostly share a block and are retained once.
      for (int f = 0; f < columns.length; f++) {
        for (int j = 0; j < gis.length; j++) {
          int slot = slotOf[j];
          CellBlock block = slot < 0 ? null : columns[f].block(slot);
          if (block == null) {
            throw new StorageException(
                ErrorCode.NOT_FOUND,
                "StorageUnitData get_data: key "
                    + gis[j]
                    + " not found in field '"
                    + fieldNames.get(f)
                    + "' (storage unit "
                    + id
                    + ")");
          }
          snapshot.set(f, j, block, columns[f].rows[slot]);
        }
      }
      return snapshot;
    } catch (RuntimeException e) {
      snapshot.close();
      throw e;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Removes every cell of the given samples; absent samples, and samples held in a newer generation
   * than the one named (a stale clear must not remove the sample that reuses an index), are
   * ignored. Idempotent. Field names stay known even when no cell is left, so a later get reports a
   * missing key, not a missing field.
   *
   * @param gis the samples to remove
   * @param generations the generation of each sample, aligned with {@code gis} (-1 where unknown:
   *     whatever generation is held is removed)
   * @return how many samples were held and are now removed
   */
  public int clear(long[] gis, long[] generations) {
    requireAligned(gis, generations);
    UnitJournal journaled = journal;
    CompletableFuture<Long> appended = null;
    int removed = 0;
    lock.writeLock().lock();
    try {
      ensureOpen();
      if (journaled != null && holdsAny(gis, generations)) {
        appended = journaled.append(UnitRecords.clear(gis, generations));
      }
      for (int j = 0; j < gis.length; j++) {
        int slot = slots.get(gis[j]);
        if (slot < 0 || older(generations[j], generationOf[slot])) {
          continue;
        }
        dropCells(slot);
        slots.remove(gis[j]);
        removed++;
      }
    } finally {
      lock.writeLock().unlock();
    }
    if (appended != null) {
      journaled.awaitDurable(appended);
    }
    return removed;
  }

  /** Whether a clear of these samples would remove anything. Under the lock. */
  private boolean holdsAny(long[] gis, long[] generations) {
    for (int j = 0; j < gis.length; j++) {
      int slot = slots.get(gis[j]);
      if (slot >= 0 && !older(generations[j], generationOf[slot])) {
        return true;
      }
    }
    return false;
  }

  /** Drops every cell of a slot; the slot stays assigned. Under the write lock. */
  private void dropCells(int slot) {
    for (FieldCells cells : fields.values()) {
      if (cells.clearSlot(slot)) {
        cellCount--;
      }
    }
  }

  /**
   * Writes every cell of the unit to {@code file} (replacing it), as of one instant. Puts and gets
   * continue while the file is written.
   *
   * @param file the checkpoint file; its directory must exist
   * @return the size and CRC32C of the written file, computed while writing
   * @throws StorageException with {@code STORAGE_ERROR} if writing failed
   */
  public FileDigest saveCheckpoint(Path file) {
    return UnitCheckpoints.save(this, file);
  }

  /**
   * Replaces the unit's whole state by a checkpoint: samples not in the file disappear. On an error
   * the state is unchanged.
   *
   * @param file a file written by {@link #saveCheckpoint}
   * @throws StorageException with {@code NOT_FOUND} for a missing file, {@code CORRUPT_DATA} for a
   *     malformed one, {@code OUT_OF_MEMORY} if the cells do not fit the unit's allocator
   */
  public void loadCheckpoint(Path file) {
    UnitCheckpoints.load(this, file);
  }

  /**
   * Reads a checkpoint file into memory of this unit's allocator and verifies it, in one pass,
   * without changing the unit; {@link StorageManager.PreparedLoad#commit()} then replaces the
   * unit's state (and cannot fail), {@link StorageManager.PreparedLoad#close()} discards it.
   *
   * @param file a file written by {@link #saveCheckpoint}
   * @param expected the manifest's size and CRC32C of the file, or null to check only its structure
   * @return the staged contents
   * @throws StorageException as {@link #loadCheckpoint}; {@code CORRUPT_DATA} also when the size or
   *     checksum differs from {@code expected}
   */
  public StorageManager.PreparedLoad prepareLoadCheckpoint(Path file, FileDigest expected) {
    return UnitCheckpoints.prepare(this, file, expected);
  }

  /**
   * Every cell of the unit and every sample's generation as of one instant, for a checkpoint: the
   * cells' blocks are retained, so the caller must close the contents.
   */
  UnitCheckpoint.Contents checkpointContents() {
    return checkpointContents(() -> {});
  }

  /**
   * As {@link #checkpointContents()}, running {@code underLock} while the contents are taken (with
   * writers excluded), so that a journal's last LSN read there matches them exactly.
   */
  UnitCheckpoint.Contents checkpointContents(Runnable underLock) {
    List<UnitCheckpoint.FieldCellsData> data = new ArrayList<>();
    Map<Long, Long> generations = new HashMap<>();
    lock.readLock().lock();
    try {
      ensureOpen();
      underLock.run();
      slots.forEach((gi, slot) -> generations.put(gi, generationOf[slot]));
      for (String name : new TreeSet<>(fields.keySet())) {
        FieldCells cells = fields.get(name);
        List<UnitCheckpoint.CellRef> refs = new ArrayList<>();
        slots.forEach(
            (gi, slot) -> {
              CellBlock block = cells.block(slot);
              if (block != null) {
                block.retain();
                refs.add(new UnitCheckpoint.CellRef(gi, block, cells.rows[slot]));
              }
            });
        refs.sort(Comparator.comparingLong(UnitCheckpoint.CellRef::gi));
        data.add(new UnitCheckpoint.FieldCellsData(name, refs));
      }
    } finally {
      lock.readLock().unlock();
    }
    return new UnitCheckpoint.Contents(
        id, capacity == Long.MAX_VALUE ? -1 : capacity, data, generations);
  }

  /**
   * Replaces the unit's state by {@code contents}, taking ownership of its blocks. With a journal
   * attached, a journal checkpoint of the new state is written before this returns (the journal
   * holds changes, not the loaded state).
   */
  void install(UnitCheckpoint.Contents contents) {
    installContents(contents);
    UnitJournal journaled = journal;
    if (journaled != null) {
      journaled.checkpoint();
    }
  }

  private void installContents(UnitCheckpoint.Contents contents) {
    lock.writeLock().lock();
    try {
      if (closed) {
        contents.close();
        ensureOpen();
      }
      dropAllCells();
      for (UnitCheckpoint.FieldCellsData field : contents.fields()) {
        FieldCells cells = new FieldCells();
        fields.put(field.field(), cells);
        for (UnitCheckpoint.CellRef ref : field.cells()) {
          int slot = slots.getOrAssign(ref.gi());
          cells.ensureSlots(slots.slotBound());
          if (cells.clearSlot(slot)) {
            cellCount--;
          }
          cells.blocks[slot] = ref.block();
          cells.rows[slot] = ref.row();
          cells.held++;
          cellCount++;
        }
      }
      generationOf = new long[Math.max(16, slots.slotBound())];
      slots.forEach(
          (gi, slot) -> generationOf[slot] = contents.generations().getOrDefault(gi, -1L));
      if (slots.size() > capacity) {
        LOG.log(
            System.Logger.Level.WARNING,
            "storage unit {0} loaded {1} samples from checkpoint of unit {2}, above its capacity {3}",
            id,
            slots.size(),
            contents.unitId(),
            capacity);
      }
    } finally {
      lock.writeLock().unlock();
    }
  }

  private void dropAllCells() {
    for (FieldCells cells : fields.values()) {
      for (int slot = 0; slot < cells.blocks.length; slot++) {
        cells.clearSlot(slot);
      }
    }
    fields.clear();
    slots.clear();
    cellCount = 0;
  }

  /** Journals the unit's changes from now on (after recovery). */
  void attachJournal(UnitJournal attached) {
    journal = attached;
  }

  /** Stops journaling (the journal is closing). */
  void detachJournal(UnitJournal attached) {
    if (journal == attached) {
      journal = null;
    }
  }

  /** Fails with {@code CLOSED} when the unit is closed. */
  void ensureOpenNow() {
    lock.readLock().lock();
    try {
      ensureOpen();
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * Whether the unit holds a cell for every field of {@code fieldNames} for sample {@code gi}.
   *
   * @param gi the sample
   * @param fieldNames the fields
   * @return true if all cells are present
   */
  public boolean contains(long gi, List<String> fieldNames) {
    lock.readLock().lock();
    try {
      ensureOpen();
      int slot = slots.get(gi);
      if (slot < 0) {
        return false;
      }
      for (String name : fieldNames) {
        FieldCells cells = fields.get(name);
        if (cells == null || cells.block(slot) == null) {
          return false;
        }
      }
      return true;
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The unit's occupancy now.
   *
   * @return a snapshot of the statistics
   */
  public StorageUnitStats stats() {
    lock.readLock().lock();
    try {
      return new StorageUnitStats(
          id,
          slots.size(),
          cellCount,
          fields.size(),
          allocator.allocatedBytes(),
          allocator.peakBytes(),
          capacity == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(capacity));
    } finally {
      lock.readLock().unlock();
    }
  }

  /**
   * The capacity in samples.
   *
   * @return the capacity, empty when unlimited
   */
  public OptionalLong capacitySamples() {
    return capacity == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(capacity);
  }

  /**
   * Drops every cell and closes the unit's allocator. Idempotent. Blocks still retained by a
   * running get are freed when that get finishes; closing the allocator before then reports them as
   * a leak, so callers stop requests first.
   */
  @Override
  public void close() {
    lock.writeLock().lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      dropAllCells();
    } finally {
      lock.writeLock().unlock();
    }
    allocator.close();
  }

  private void ensureOpen() {
    if (closed) {
      throw new StorageException(ErrorCode.CLOSED, "storage unit " + id + " is closed");
    }
  }

  @Override
  public String toString() {
    return "StorageUnit[id=" + id + ", capacity=" + capacitySamples() + "]";
  }
}
