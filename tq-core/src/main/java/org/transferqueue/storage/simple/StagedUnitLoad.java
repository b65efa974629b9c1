package org.transferqueue.storage.simple;

import java.util.List;
import org.transferqueue.ErrorCode;
import org.transferqueue.StorageException;
import org.transferqueue.storage.StorageManager;

/**
 * Checkpoint contents read and verified for some units, installed together by {@link #commit()} or
 * freed by {@link #close()}. Thread-safe (both are synchronized); owns the contents until then.
 */
final class StagedUnitLoad implements StorageManager.PreparedLoad {
  private final List<StorageUnit> units;
  private final List<UnitCheckpoint.Contents> contents;
  private boolean done;

  /**
   * Stages contents.
   *
   * @param units the units, aligned with {@code contents}
   * @param contents the staged contents; this object takes ownership
   */
  StagedUnitLoad(List<StorageUnit> units, List<UnitCheckpoint.Contents> contents) {
    this.units = units;
    this.contents = contents;
  }

  @Override
  public synchronized void commit() {
    if (done) {
      throw new StorageException(ErrorCode.ILLEGAL_STATE, "checkpoint load already finished");
    }
    done = true;
    for (int i = 0; i < units.size(); i++) {
      units.get(i).install(contents.get(i));
    }
  }

  @Override
  public synchronized void close() {
    if (!done) {
      done = true;
      contents.forEach(UnitCheckpoint.Contents::close);
    }
  }
}
