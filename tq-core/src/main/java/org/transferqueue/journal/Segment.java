package org.transferqueue.journal;

import java.nio.file.Path;

/**
 * One segment file as the journal tracks it.
 *
 * <p>{@code bytes} is written by the writer thread (the active segment) and read by others through
 * the journal's segment lock.
 */
final class Segment {
  final Path path;
  final long firstLsn;
  long bytes;

  Segment(Path path, long firstLsn, long bytes) {
    this.path = path;
    this.firstLsn = firstLsn;
    this.bytes = bytes;
  }

  @Override
  public String toString() {
    return path.getFileName() + " (" + bytes + " bytes from LSN " + firstLsn + ")";
  }
}
