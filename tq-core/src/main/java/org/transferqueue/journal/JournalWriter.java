package org.transferqueue.journal;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.transferqueue.Clock;
import org.transferqueue.DurableFiles;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * The journal's writer thread: drains the queue into groups, writes each group with gathering
 * writes straight from the records' segments, syncs per policy, completes the group's futures.
 *
 * <p>Owns the active segment's channel and every scratch structure (the header buffer, the array of
 * buffers handed to the gathering write), all reused from group to group. Counters are read by
 * other threads.
 */
final class JournalWriter implements Runnable {
  /** A numbered record waiting for the writer. */
  record Pending(JournalRecord record, long lsn, int crc, CompletableFuture<Long> done) {}

  /** Start a new segment if everything in the active one is at most {@code lsn}. */
  record Roll(long lsn, CompletableFuture<Long> done) {}

  /** Force everything written so far. */
  record Sync(CompletableFuture<Long> done) {}

  static final Object STOP = new Object();

  private static final System.Logger LOG = System.getLogger(JournalWriter.class.getName());
  private static final int MAX_GROUP = 4096;

  private final Journal journal;
  private final JournalSettings settings;
  private final Clock clock;
  private final List<Object> drained = new ArrayList<>();
  private final List<Pending> group = new ArrayList<>();
  private final List<ByteBuffer> iov = new ArrayList<>();
  private ByteBuffer[] iovArray = new ByteBuffer[64];
  private ByteBuffer headers = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
  private final AtomicLong groups = new AtomicLong();
  private final AtomicLong bytes = new AtomicLong();
  private final AtomicLong fsyncs = new AtomicLong();
  private final AtomicLong writtenLsn = new AtomicLong();

  private FileChannel channel;
  private Segment active;
  private long unsyncedSinceNs = -1;

  JournalWriter(Journal journal, JournalSettings settings, Clock clock) {
    this.journal = journal;
    this.settings = settings;
    this.clock = clock;
  }

  long groups() {
    return groups.get();
  }

  long bytes() {
    return bytes.get();
  }

  long fsyncs() {
    return fsyncs.get();
  }

  /** The LSN of the last record written to the file. */
  long writtenLsn() {
    return writtenLsn.get();
  }

  /** Continues appending to a recovered segment (called before the thread starts). */
  void continueSegment(Segment segment) throws IOException {
    channel = FileChannel.open(segment.path, StandardOpenOption.WRITE);
    channel.position(segment.bytes);
    active = segment;
    writtenLsn.set(segment.firstLsn - 1);
  }

  /** Creates the segment whose first record will be {@code firstLsn}. */
  void startSegment(long firstLsn) throws IOException {
    if (channel != null) {
      channel.force(false);
      fsyncs.incrementAndGet();
      channel.close();
      channel = null;
    }
    Path path =
        settings.directory().resolve(JournalDescriptor.segmentName(journal.role(), firstLsn));
    channel =
        FileChannel.open(
            path,
            StandardOpenOption.CREATE,
            StandardOpenOption.TRUNCATE_EXISTING,
            StandardOpenOption.WRITE);
    ByteBuffer header = JournalDescriptor.segmentHeader(journal.role(), firstLsn);
    long headerBytes = header.remaining();
    while (header.hasRemaining()) {
      channel.write(header);
    }
    channel.force(true);
    fsyncs.incrementAndGet();
    DurableFiles.syncDirectory(settings.directory());
    active = new Segment(path, firstLsn, headerBytes);
    journal.addSegment(active);
    journal.reserveHeader(headerBytes);
  }

  @Override
  public void run() {
    try {
      while (true) {
        Object first = next();
        if (first == null) {
          syncIfDue();
          continue;
        }
        drained.add(first);
        journal.queue().drainTo(drained, MAX_GROUP - 1);
        if (process()) {
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failAll(new TqException(ErrorCode.CLOSED, "journal writer interrupted"));
    } catch (IOException | RuntimeException e) {
      TqException error =
          new TqException(
              ErrorCode.STORAGE_ERROR,
              "journal " + settings.directory() + " cannot write: " + e + "; appends refused",
              e);
      LOG.log(System.Logger.Level.ERROR, error.getMessage(), e);
      journal.fail(error);
      failAll(error);
    }
  }

  private Object next() throws InterruptedException {
    if (unsyncedSinceNs < 0) {
      return journal.queue().take();
    }
    long waitNs = settings.syncInterval().toNanos() - (clock.nanoTime() - unsyncedSinceNs);
    if (waitNs <= 0) {
      return journal.queue().poll();
    }
    return journal.queue().poll(waitNs, TimeUnit.NANOSECONDS);
  }

  /** Handles one drained batch in queue order; returns true at STOP. */
  private boolean process() throws IOException {
    for (Object item : drained) {
      if (item instanceof Pending pending) {
        group.add(pending);
        continue;
      }
      writeGroup();
      if (item == STOP) {
        sync();
        drained.clear();
        return true;
      } else if (item instanceof Sync command) {
        sync();
        command.done().complete(writtenLsn.get());
      } else if (item instanceof Roll roll) {
        if (writtenLsn.get() <= roll.lsn() && writtenLsn.get() >= active.firstLsn) {
          startSegment(writtenLsn.get() + 1);
          unsyncedSinceNs = -1;
        }
        roll.done().complete(writtenLsn.get());
      }
    }
    writeGroup();
    syncIfDue();
    drained.clear();
    return false;
  }

  /** Writes the pending group (rolling segments as they fill), syncs per policy, completes. */
  private void writeGroup() throws IOException {
    if (group.isEmpty()) {
      return;
    }
    int from = 0;
    while (from < group.size()) {
      int to = fitInSegment(from);
      write(from, to);
      from = to;
      if (from < group.size()) {
        startSegment(group.get(from).lsn());
      }
    }
    groups.incrementAndGet();
    if (settings.sync() == SyncPolicy.FSYNC) {
      sync();
    } else if (unsyncedSinceNs < 0) {
      unsyncedSinceNs = clock.nanoTime();
    }
    journal.completed(group.size());
    for (Pending pending : group) {
      pending.done().complete(pending.lsn());
    }
    journal.durableThrough(group.getLast().lsn());
    group.clear();
  }

  /** The end of the run of records from {@code from} that fits the active segment (at least 1). */
  private int fitInSegment(int from) {
    long size = active.bytes;
    boolean empty = active.firstLsn == group.get(from).lsn();
    int to = from;
    while (to < group.size()) {
      long next = group.get(to).record().fileBytes();
      if (size + next > settings.segmentBytes() && !(empty && to == from)) {
        break;
      }
      size += next;
      to++;
    }
    return to;
  }

  private void write(int from, int to) throws IOException {
    if (from == to) {
      return;
    }
    iov.clear();
    headers.clear();
    int headerBytes = 0;
    for (int i = from; i < to; i++) {
      headerBytes += JournalDescriptor.RECORD_HEADER_OFFSET + group.get(i).record().header().length;
    }
    if (headers.capacity() < headerBytes) {
      headers = ByteBuffer.allocate(Math.max(headerBytes, 2 * headers.capacity()));
      headers.order(ByteOrder.LITTLE_ENDIAN);
    }
    long total = 0;
    for (int i = from; i < to; i++) {
      Pending pending = group.get(i);
      JournalRecord record = pending.record();
      int start = headers.position();
      headers.putInt((int) record.lengthBytes()).putInt(pending.crc()).putLong(pending.lsn());
      headers.putShort(record.type()).putInt(record.header().length).put(record.header());
      iov.add(headers.slice(start, headers.position() - start));
      for (MemorySegment segment : record.payload()) {
        if (segment.byteSize() > 0) {
          iov.addAll(JournalRecord.chunks(segment));
        }
      }
      total += record.fileBytes();
    }
    if (iovArray.length < iov.size()) {
      iovArray = new ByteBuffer[Math.max(iov.size(), 2 * iovArray.length)];
    }
    int count = iov.size();
    ByteBuffer[] buffers = iov.toArray(iovArray);
    long written = 0;
    int first = 0;
    while (written < total) {
      written += channel.write(buffers, first, count - first);
      while (first < count && !buffers[first].hasRemaining()) {
        first++;
      }
    }
    Arrays.fill(iovArray, 0, count, null);
    journal.grow(active, total);
    bytes.addAndGet(total);
    writtenLsn.set(group.get(to - 1).lsn());
  }

  private void syncIfDue() throws IOException {
    if (unsyncedSinceNs >= 0
        && clock.nanoTime() - unsyncedSinceNs >= settings.syncInterval().toNanos()) {
      sync();
    }
  }

  private void sync() throws IOException {
    if (channel != null) {
      channel.force(false);
      fsyncs.incrementAndGet();
    }
    unsyncedSinceNs = -1;
  }

  private void failAll(TqException error) {
    for (Pending pending : group) {
      pending.done().completeExceptionally(error);
    }
    group.clear();
    for (Object item : drained) {
      failItem(item, error);
    }
    drained.clear();
    Object item;
    while ((item = journal.queue().poll()) != null) {
      failItem(item, error);
    }
  }

  private static void failItem(Object item, TqException error) {
    switch (item) {
      case Pending pending -> pending.done().completeExceptionally(error);
      case Sync sync -> sync.done().completeExceptionally(error);
      case Roll roll -> roll.done().completeExceptionally(error);
      default -> {}
    }
  }

  void closeChannel() {
    if (channel == null) {
      return;
    }
    try {
      channel.close();
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot close journal segment " + active, e);
    }
    channel = null;
  }
}
