package org.transferqueue.journal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.testing.Await;
import org.transferqueue.testing.Seeds;

@ExtendWith(LeakCheckExtension.class)
@Timeout(120)
class JournalTest {
  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir Path dir;

  /** One record as the test wrote it. */
  record Written(long lsn, short type, byte[] header, byte[] payload) {}

  /** A record as recovery replayed it (copied out of the scratch buffers). */
  record Read(long lsn, short type, byte[] header, byte[] payload) {
    boolean sameAs(Written written) {
      return lsn == written.lsn()
          && type == written.type()
          && Arrays.equals(header, written.header())
          && Arrays.equals(payload, written.payload());
    }
  }

  private JournalSettings.Builder settings() {
    return JournalSettings.builder(dir).segmentBytes(64 << 10).maxBytes(64L << 20);
  }

  private static Journal openRecovered(JournalSettings settings, List<Read> into) {
    Journal journal = Journal.open(settings, "unit-0", Clock.SYSTEM);
    try {
      journal.recover(0, collect(into));
      return journal;
    } catch (RuntimeException e) {
      journal.close();
      throw e;
    }
  }

  private static RecordVisitor collect(List<Read> into) {
    return (lsn, type, header, payload) -> {
      byte[] h = new byte[header.remaining()];
      header.get(h);
      into.add(new Read(lsn, type, h, payload.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE)));
    };
  }

  private static Written appendRandom(Journal journal, SplittableRandom random, int maxPayload) {
    short type = (short) random.nextInt(1, 100);
    byte[] header = bytes(random, random.nextInt(0, 40));
    byte[] payload = bytes(random, random.nextInt(0, maxPayload));
    // Split the payload over up to three segments, as a role's cells would be.
    List<MemorySegment> parts = new ArrayList<>();
    int at = 0;
    while (at < payload.length) {
      int n = Math.min(payload.length - at, random.nextInt(1, payload.length + 1));
      parts.add(MemorySegment.ofArray(Arrays.copyOfRange(payload, at, at + n)));
      at += n;
    }
    long lsn = journal.appendAndAwait(type, header, parts, WAIT);
    return new Written(lsn, type, header, payload);
  }

  private static byte[] bytes(SplittableRandom random, int n) {
    byte[] b = new byte[n];
    random.nextBytes(b);
    return b;
  }

  private static void assertSame(List<Read> read, List<Written> written) {
    assertThat(read).hasSize(written.size());
    for (int i = 0; i < written.size(); i++) {
      assertThat(read.get(i).sameAs(written.get(i))).as("record %d", i).isTrue();
    }
  }

  @Test
  void shouldReplayEveryRecordByteEqualAfterReopen() throws IOException {
    SplittableRandom random = new SplittableRandom(Seeds.seed());
    List<Written> written = new ArrayList<>();
    try (Journal journal = openRecovered(settings().build(), new ArrayList<>())) {
      for (int i = 0; i < 2000; i++) {
        written.add(appendRandom(journal, random, 300));
      }
      assertThat(journal.lastLsn()).isEqualTo(2000);
      JournalStatistics stats = journal.statistics();
      assertThat(stats.appends()).isEqualTo(2000);
      assertThat(stats.fsyncs()).isGreaterThanOrEqualTo(stats.groups());
    }
    assertThat(segmentFiles()).hasSizeGreaterThan(2);

    List<Read> read = new ArrayList<>();
    try (Journal journal = openRecovered(settings().build(), read)) {
      assertSame(read, written);
      written.add(appendRandom(journal, random, 300));
      assertThat(written.getLast().lsn()).isEqualTo(2001);
    }
    List<Read> again = new ArrayList<>();
    try (Journal journal = Journal.open(settings().build(), "unit-0", Clock.SYSTEM)) {
      Recovery recovery = journal.recover(1500, collect(again));
      assertThat(recovery.skipped()).isEqualTo(1500);
      assertThat(recovery.replayed()).isEqualTo(501);
      assertSame(again, written.subList(1500, 2001));
    }
  }

  @Test
  void shouldWriteOffHeapPayloadsStraightFromTheirSegments(BufferAllocator allocator) {
    SplittableRandom random = new SplittableRandom(Seeds.seed());
    byte[] expected = bytes(random, 100_000);
    try (NativeBuffer cell = allocator.allocate(expected.length);
        Journal journal = openRecovered(settings().build(), new ArrayList<>())) {
      MemorySegment.copy(MemorySegment.ofArray(expected), 0, cell.segment(), 0, expected.length);
      journal.appendAndAwait((short) 7, new byte[] {1, 2}, List.of(cell.segment()), WAIT);
    }
    List<Read> read = new ArrayList<>();
    try (Journal reopened = openRecovered(settings().build(), read)) {
      assertThat(reopened.lastLsn()).isPositive();
      assertThat(read).hasSize(1);
      assertThat(read.getFirst().payload()).isEqualTo(expected);
    }
  }

  @Test
  void shouldGiveConcurrentAppendsGaplessLsnsInTheirOrderWithGroupCommit() throws Exception {
    SplittableRandom seeds = new SplittableRandom(Seeds.seed());
    int threads = 8;
    int perThread = 400;
    List<List<Written>> byThread = new ArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    ConcurrentHashMap<Long, Boolean> lsns = new ConcurrentHashMap<>();
    try (Journal journal = openRecovered(settings().build(), new ArrayList<>())) {
      for (int t = 0; t < threads; t++) {
        List<Written> mine = new ArrayList<>();
        byThread.add(mine);
        SplittableRandom random = seeds.split();
        workers.add(
            Thread.ofPlatform()
                .start(
                    () -> {
                      try {
                        start.await();
                      } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                      }
                      // Several appends in flight per thread, so groups hold many records.
                      List<CompletableFuture<Long>> inFlight = new ArrayList<>();
                      List<Written> pending = new ArrayList<>();
                      for (int i = 0; i < perThread; i++) {
                        byte[] payload = bytes(random, random.nextInt(0, 200));
                        byte[] header = bytes(random, 8);
                        inFlight.add(
                            journal.append(
                                (short) 1, header, List.of(MemorySegment.ofArray(payload))));
                        pending.add(new Written(0, (short) 1, header, payload));
                      }
                      for (int i = 0; i < perThread; i++) {
                        long lsn = journal.await(inFlight.get(i), WAIT);
                        lsns.put(lsn, true);
                        Written w = pending.get(i);
                        mine.add(new Written(lsn, w.type(), w.header(), w.payload()));
                      }
                    }));
      }
      start.countDown();
      for (Thread worker : workers) {
        worker.join();
      }
      JournalStatistics stats = journal.statistics();
      assertThat(stats.appends()).isEqualTo((long) threads * perThread);
      assertThat(stats.groups()).isBetween(1L, (long) threads * perThread);
      assertThat(stats.fsyncs()).isGreaterThanOrEqualTo(stats.groups());
    }
    assertThat(lsns.keySet()).hasSize(threads * perThread);
    assertThat(lsns.keySet().stream().mapToLong(Long::longValue).max())
        .hasValue(threads * perThread);
    List<Read> read = new ArrayList<>();
    try (Journal reopened = openRecovered(settings().build(), read)) {
      assertThat(reopened.lastLsn()).isPositive();
      assertThat(read).hasSize(threads * perThread);
      for (List<Written> mine : byThread) {
        for (int i = 0; i < mine.size(); i++) {
          Written w = mine.get(i);
          assertThat(read.get((int) w.lsn() - 1).sameAs(w)).isTrue();
          if (i > 0) {
            assertThat(w.lsn()).isGreaterThan(mine.get(i - 1).lsn());
          }
        }
      }
    }
  }

  @Test
  void shouldCutATornLastRecordAtEveryByteOffsetAndKeepTheRest() throws IOException {
    SplittableRandom random = new SplittableRandom(Seeds.seed());
    List<Written> written = new ArrayList<>();
    try (Journal journal = openRecovered(settings().build(), new ArrayList<>())) {
      for (int i = 0; i < 20; i++) {
        written.add(appendRandom(journal, random, 120));
      }
    }
    Path segment = segmentFiles().getLast();
    byte[] whole = Files.readAllBytes(segment);
    Written last = written.getLast();
    long lastBytes =
        JournalDescriptor.RECORD_HEADER_OFFSET + last.header().length + last.payload().length;
    int lastStart = (int) (whole.length - lastBytes);
    for (int cut = lastStart; cut < whole.length; cut++) {
      Files.write(segment, Arrays.copyOf(whole, cut));
      List<Read> read = new ArrayList<>();
      try (Journal journal = Journal.open(settings().build(), "unit-0", Clock.SYSTEM)) {
        Recovery recovery = journal.recover(0, collect(read));
        assertThat(recovery.truncatedBytes()).as("cut at %d", cut).isEqualTo(cut - lastStart);
        assertThat(recovery.lastLsn()).isEqualTo(19);
        assertSame(read, written.subList(0, 19));
        // The journal goes on where the intact records end.
        assertThat(journal.appendAndAwait((short) 1, new byte[0], List.of(), WAIT)).isEqualTo(20);
      }
      List<Read> reread = new ArrayList<>();
      try (Journal reopened = openRecovered(settings().build(), reread)) {
        assertThat(reopened.lastLsn()).isPositive();
        assertThat(reread).hasSize(20);
        assertSame(reread.subList(0, 19), written.subList(0, 19));
      }
    }
  }

  @Test
  void shouldTreatZerosAfterTheLastRecordAsATornTail() throws IOException {
    SplittableRandom random = new SplittableRandom(Seeds.seed());
    List<Written> written = new ArrayList<>();
    try (Journal journal = openRecovered(settings().build(), new ArrayList<>())) {
      for (int i = 0; i < 5; i++) {
        written.add(appendRandom(journal, random, 120));
      }
    }
    Path segment = segmentFiles().getLast();
    Files.write(segment, new byte[4096], StandardOpenOption.APPEND);
    List<Read> read = new ArrayList<>();
    try (Journal reopened = openRecovered(settings().build(), read)) {
      assertThat(reopened.lastLsn()).isPositive();
      assertSame(read, written);
    }
  }

  @Test
  void shouldNeverServeAWrongRecordWhenAByteIsFlipped() throws IOException {
    SplittableRandom random = new SplittableRandom(Seeds.seed());
    List<Written> written = new ArrayList<>();
    try (Journal journal =
        openRecovered(settings().segmentBytes(8 << 10).build(), new ArrayList<>())) {
      for (int i = 0; i < 200; i++) {
        written.add(appendRandom(journal, random, 150));
      }
    }
    List<Path> files = segmentFiles();
    List<byte[]> originals = new ArrayList<>();
    for (Path file : files) {
      originals.add(Files.readAllBytes(file));
    }
    int corrupt = 0;
    for (int trial = 0; trial < 300; trial++) {
      int f = random.nextInt(files.size());
      byte[] damaged = originals.get(f).clone();
      int at = random.nextInt(damaged.length);
      damaged[at] ^= (byte) (1 << random.nextInt(8));
      Files.write(files.get(f), damaged);
      List<Read> read = new ArrayList<>();
      try (Journal journal = Journal.open(settings().build(), "unit-0", Clock.SYSTEM)) {
        journal.recover(0, collect(read));
        // Accepted only as a torn tail: the last segment's last record, nothing else lost.
        assertThat(f).as("flip at %s offset %d", files.get(f), at).isEqualTo(files.size() - 1);
        assertThat(read).hasSize(written.size() - 1);
      } catch (TqException e) {
        assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA);
        assertThat(e.getMessage()).contains(files.get(f).toString()).contains("offset");
        corrupt++;
      }
      for (int i = 0; i < read.size(); i++) {
        assertThat(read.get(i).sameAs(written.get(i))).as("record %d after flip", i).isTrue();
      }
      // Restore every file (a torn-tail recovery truncated the last one).
      for (int i = 0; i < files.size(); i++) {
        Files.write(files.get(i), originals.get(i));
      }
    }
    assertThat(corrupt).isGreaterThan(0);
  }

  @Test
  void shouldRefuseWithCorruptDataNamingTheFileWhenAMiddleSegmentIsMissing() throws IOException {
    SplittableRandom random = new SplittableRandom(Seeds.seed());
    try (Journal journal =
        openRecovered(settings().segmentBytes(8 << 10).build(), new ArrayList<>())) {
      for (int i = 0; i < 200; i++) {
        appendRandom(journal, random, 150);
      }
    }
    List<Path> files = segmentFiles();
    assertThat(files).hasSizeGreaterThanOrEqualTo(3);
    Files.delete(files.get(1));
    try (Journal journal = Journal.open(settings().build(), "unit-0", Clock.SYSTEM)) {
      assertThatThrownBy(() -> journal.recover(0, (lsn, type, header, payload) -> {}))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA))
          .hasMessageContaining(files.get(2).toString())
          .hasMessageContaining("missing");
    }
    // The first file missing while no checkpoint covers it: refused too.
    Files.delete(files.get(0));
    try (Journal journal = Journal.open(settings().build(), "unit-0", Clock.SYSTEM)) {
      assertThatThrownBy(() -> journal.recover(0, (lsn, type, header, payload) -> {}))
          .hasMessageContaining(files.get(2).toString())
          .hasMessageContaining("missing");
    }
  }

  @Test
  void shouldRefuseAppendsWhenFullAndAcceptThemAgainAfterTruncation() {
    JournalSettings small = settings().segmentBytes(8 << 10).maxBytes(32 << 10).build();
    byte[] payload = new byte[1000];
    long lastGood = 0;
    try (Journal journal = openRecovered(small, new ArrayList<>())) {
      TqException full = null;
      for (int i = 0; i < 100 && full == null; i++) {
        try {
          lastGood =
              journal.appendAndAwait(
                  (short) 1, new byte[0], List.of(MemorySegment.ofArray(payload)), WAIT);
        } catch (TqException e) {
          full = e;
        }
      }
      assertThat(full).isNotNull();
      assertThat(full.code()).isEqualTo(ErrorCode.CAPACITY_EXCEEDED);
      assertThat(full.getMessage()).contains("journal full").contains(dir.toString());
      assertThat(journal.diskBytes()).isLessThanOrEqualTo(small.maxBytes());
      assertThat(journal.statistics().rejected()).isEqualTo(1);

      long freed = journal.truncateThrough(lastGood);
      assertThat(freed).isPositive();
      assertThat(
              journal.appendAndAwait(
                  (short) 1, new byte[0], List.of(MemorySegment.ofArray(payload)), WAIT))
          .isEqualTo(lastGood + 1);
    }
    List<Read> read = new ArrayList<>();
    try (Journal journal = Journal.open(small, "unit-0", Clock.SYSTEM)) {
      Recovery recovery = journal.recover(lastGood, collect(read));
      assertThat(recovery.lastLsn()).isEqualTo(lastGood + 1);
      assertThat(read).hasSize(1);
    }
  }

  @Test
  void shouldRefuseASecondJournalOnTheSameDirectory() {
    try (Journal journal = Journal.open(settings().build(), "unit-0", Clock.SYSTEM)) {
      assertThatThrownBy(() -> Journal.open(settings().build(), "unit-0", Clock.SYSTEM))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE))
          .hasMessageContaining(dir.toString());
      assertThatThrownBy(() -> journal.appendAndAwait((short) 1, new byte[0], List.of(), WAIT))
          .hasMessageContaining("recovered before");
    }
    try (Journal reopened = Journal.open(settings().build(), "unit-0", Clock.SYSTEM)) {
      reopened.recover(0, (lsn, type, header, payload) -> {});
    }
  }

  @Test
  void shouldCompleteAppendsUnderTheIntervalPolicyAndSyncWithinTheInterval() {
    JournalSettings interval =
        settings().sync(SyncPolicy.INTERVAL).syncInterval(Duration.ofMillis(5)).build();
    List<Read> read = new ArrayList<>();
    try (Journal journal = openRecovered(interval, new ArrayList<>())) {
      long fsyncsBefore = journal.statistics().fsyncs();
      for (int i = 0; i < 50; i++) {
        journal.appendAndAwait((short) 2, new byte[] {(byte) i}, List.of(), WAIT);
      }
      Await.until(() -> journal.statistics().fsyncs() > fsyncsBefore, "the interval's fsync");
    }
    try (Journal reopened = openRecovered(interval, read)) {
      assertThat(reopened.lastLsn()).isPositive();
      assertThat(read).hasSize(50);
    }
  }

  @Test
  void shouldFailAppendsWithClosedAfterClose() {
    Journal journal = openRecovered(settings().build(), new ArrayList<>());
    journal.close();
    journal.close();
    assertThatThrownBy(() -> journal.appendAndAwait((short) 1, new byte[0], List.of(), WAIT))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CLOSED));
  }

  @Test
  void shouldKeepTheNewestCheckpointAndDeleteOlderOnes() throws IOException {
    JournalCheckpoints.write(dir, 5, d -> Files.writeString(d.resolve("state"), "five"));
    Files.createDirectories(dir.resolve(".checkpoint-pending.tmp").resolve("leftover"));
    JournalCheckpoints.Checkpoint newest =
        JournalCheckpoints.write(dir, 9, d -> Files.writeString(d.resolve("state"), "nine"));
    assertThat(JournalCheckpoints.latest(dir)).contains(newest);
    assertThat(Files.readString(newest.directory().resolve("state"))).isEqualTo("nine");
    assertThat(Files.exists(dir.resolve("checkpoint-00000000000000000005"))).isFalse();
    assertThatThrownBy(
            () ->
                JournalCheckpoints.write(
                    dir,
                    12,
                    d -> {
                      throw new IOException("disk gone");
                    }))
        .hasMessageContaining("disk gone");
    assertThat(JournalCheckpoints.latest(dir)).contains(newest);
    try (Stream<Path> files = Files.list(dir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .containsExactly("checkpoint-00000000000000000009");
    }
  }

  @Test
  void shouldRejectBadSettingsNamingTheKey() {
    assertThatThrownBy(() -> settings().segmentBytes(100).build())
        .hasMessageContaining("durability.segment_bytes");
    assertThatThrownBy(() -> settings().maxBytes(65 << 10).build())
        .hasMessageContaining("durability.max_bytes");
    assertThatThrownBy(() -> settings().syncInterval(Duration.ZERO).build())
        .hasMessageContaining("durability.sync_interval");
    assertThatThrownBy(() -> SyncPolicy.fromName("always")).hasMessageContaining("always");
    assertThat(SyncPolicy.fromName("Interval")).isEqualTo(SyncPolicy.INTERVAL);
  }

  private List<Path> segmentFiles() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".tqj")).sorted().toList();
    }
  }
}
