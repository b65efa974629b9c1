package org.transferqueue.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.Clock;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.journal.JournalSettings;
import org.transferqueue.journal.SyncPolicy;
import org.transferqueue.meta.BatchMeta;
import org.transferqueue.sampler.InsertPosition;
import org.transferqueue.sampler.RankAwareSampler;
import org.transferqueue.sampler.Sampler;
import org.transferqueue.sampler.SamplerState;
import org.transferqueue.sampler.SequentialSampler;
import org.transferqueue.testing.Seeds;

/**
 * The controller's journal: seeded random operation sequences applied to a durable controller,
 * which is then abandoned as a killed process would leave it and recovered into a fresh one from
 * the same directory: the recovered state equals the live one (partitions, production, consumption,
 * tags, keys, generations, the allocator, the controller id, the sampler's cache). Also damaged
 * journals, a second process on the same directory and compaction.
 */
class ControllerJournalTest {
  private static final ControllerOptions OPTIONS =
      ControllerOptions.builder()
          .preallocSampleNum(2)
          .pollingMode(true)
          .fetchTimeout(Duration.ofMillis(100))
          .build();

  private static JournalSettings settings(Path dir, SyncPolicy sync) {
    return JournalSettings.builder(dir.resolve("controller"))
        .sync(sync)
        .segmentBytes(16 << 10)
        .maxBytes(64L << 20)
        .build();
  }

  @Test
  void shouldRecoverTheLiveStateAfterRandomOperations(@TempDir Path dir) {
    long seed = Seeds.seed();
    for (int run = 0; run < 6; run++) {
      Path runDir = dir.resolve("run" + run);
      boolean rankAware = run % 2 == 1;
      SyncPolicy sync = run % 3 == 2 ? SyncPolicy.INTERVAL : SyncPolicy.FSYNC;
      assertRecoversLiveState(seed + run, runDir, rankAware, sync, 400);
    }
  }

  private static Sampler sampler(boolean rankAware) {
    return rankAware ? new RankAwareSampler() : new SequentialSampler();
  }

  private static void assertRecoversLiveState(
      long seed, Path dir, boolean rankAware, SyncPolicy sync, int steps) {
    Controller live =
        Controller.recover(OPTIONS, sampler(rankAware), Clock.SYSTEM, settings(dir, sync));
    ControllerWorkload workload = new ControllerWorkload(seed, live, true);
    for (int i = 0; i < steps; i++) {
      workload.step();
    }
    ControllerState expected = live.snapshotState();
    live.abandon();
    Controller recovered =
        Controller.recover(OPTIONS, sampler(rankAware), Clock.SYSTEM, settings(dir, sync));
    try {
      assertSameState(recovered.snapshotState(), expected, "seed=" + seed);
      recovered.checkInvariants();
      // The recovered controller goes on journaling from where the journal ended.
      ControllerWorkload more = new ControllerWorkload(seed + 1000, recovered, true);
      for (int i = 0; i < steps / 4; i++) {
        more.step();
      }
      expected = recovered.snapshotState();
    } finally {
      recovered.abandon();
    }
    Controller again =
        Controller.recover(OPTIONS, sampler(rankAware), Clock.SYSTEM, settings(dir, sync));
    try {
      assertSameState(again.snapshotState(), expected, "seed=" + seed + " second recovery");
    } finally {
      again.close();
    }
  }

  /** States compared part by part; a sampler's cache entries in any order. */
  static void assertSameState(ControllerState actual, ControllerState expected, String what) {
    assertThat(actual.controllerId())
        .as(what + " controller id")
        .isEqualTo(expected.controllerId());
    assertThat(actual.allocator()).as(what + " allocator").isEqualTo(expected.allocator());
    assertThat(actual.partitions().stream().map(PartitionState::partitionId).toList())
        .as(what + " partition ids")
        .isEqualTo(expected.partitions().stream().map(PartitionState::partitionId).toList());
    for (int i = 0; i < expected.partitions().size(); i++) {
      PartitionState a = actual.partitions().get(i);
      PartitionState e = expected.partitions().get(i);
      String at = what + " partition " + e.partitionId() + " ";
      assertThat(a.createdAtMillis()).as(at + "created").isEqualTo(e.createdAtMillis());
      assertThat(a.active()).as(at + "active").isEqualTo(e.active());
      assertThat(a.preAllocated()).as(at + "pre-allocated").isEqualTo(e.preAllocated());
      assertThat(a.fields()).as(at + "fields").isEqualTo(e.fields());
      assertThat(a.consumption()).as(at + "consumption").isEqualTo(e.consumption());
      assertThat(a.tags()).as(at + "tags").isEqualTo(e.tags());
      assertThat(a.backendMeta()).as(at + "backend metadata").isEqualTo(e.backendMeta());
      assertThat(a.keys()).as(at + "keys").isEqualTo(e.keys());
      // A checkpoint keeps the inserts of the samples that exist, not the partition's insert
      // counter: inserts are numbered alike up to gaps where every sample of an insert is gone.
      assertThat(ranked(a.insertPositions()))
          .as(at + "insert positions")
          .isEqualTo(ranked(e.insertPositions()));
    }
    assertThat(actual.samplerType()).isEqualTo(expected.samplerType());
    assertThat(new HashSet<>(((SamplerState) actual.samplerState()).entries()))
        .as(what + " sampler state")
        .isEqualTo(new HashSet<>(((SamplerState) expected.samplerState()).entries()));
  }

  /** Insert positions with each insert numbered by its rank among the inserts present. */
  private static Map<Long, List<Long>> ranked(Map<Long, InsertPosition> positions) {
    List<Long> inserts =
        positions.values().stream().map(InsertPosition::insert).distinct().sorted().toList();
    Map<Long, List<Long>> out = new HashMap<>();
    positions.forEach(
        (index, at) ->
            out.put(index, List.of((long) inserts.indexOf(at.insert()), (long) at.row())));
    return out;
  }

  @Test
  void shouldReplayOnTopOfACheckpointAndKeepTheDiskBounded(@TempDir Path dir) {
    JournalSettings small =
        JournalSettings.builder(dir.resolve("controller"))
            .sync(SyncPolicy.INTERVAL)
            .segmentBytes(4 << 10)
            .maxBytes(64 << 10)
            .build();
    Controller live = Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, small);
    ControllerWorkload workload = new ControllerWorkload(Seeds.seed(), live, false);
    for (int i = 0; i < 3000; i++) {
      workload.step();
      // Compaction runs in the background once the journal passes half its limit.
      assertThat(live.journalBytes()).isLessThanOrEqualTo(small.maxBytes());
    }
    ControllerState expected = live.snapshotState();
    live.abandon();
    try (Stream<Path> files = Files.list(small.directory())) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .anyMatch(name -> name.startsWith("checkpoint-"));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    Controller recovered =
        Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, small);
    try {
      assertSameState(recovered.snapshotState(), expected, "after compaction");
    } finally {
      recovered.close();
    }
  }

  @Test
  void shouldRecoverFromTheCheckpointOfACleanClose(@TempDir Path dir) {
    JournalSettings settings = settings(dir, SyncPolicy.FSYNC);
    Controller live = Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings);
    BatchMeta inserted = live.getMetadata(GetMetadataRequest.insert("p", List.of("a"), 3));
    Fixtures.produce(live, "p", inserted.globalIndexes(), "a");
    live.getMetadata(GetMetadataRequest.fetch("p", List.of("a"), "t", 2));
    ControllerState expected = live.snapshotState();
    live.close();
    assertThatThrownBy(() -> live.listPartitions())
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
    Controller recovered =
        Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings);
    try {
      assertSameState(recovered.snapshotState(), expected, "clean close");
      assertThat(
              recovered
                  .getMetadata(GetMetadataRequest.fetch("p", List.of("a"), "t", 1))
                  .globalIndexes())
          .containsExactly(inserted.globalIndexes().get(2));
    } finally {
      recovered.close();
    }
  }

  @Test
  void shouldRefuseASecondControllerOnTheSameDirectory(@TempDir Path dir) {
    JournalSettings settings = settings(dir, SyncPolicy.FSYNC);
    Controller first = Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings);
    try {
      assertThatThrownBy(
              () -> Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings))
          .isInstanceOfSatisfying(
              TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.ILLEGAL_STATE));
    } finally {
      first.close();
    }
  }

  @Test
  void shouldRefuseADamagedJournalNamingTheFile(@TempDir Path dir) throws IOException {
    JournalSettings settings = settings(dir, SyncPolicy.FSYNC);
    Controller live = Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings);
    ControllerWorkload workload = new ControllerWorkload(Seeds.seed(), live, false);
    for (int i = 0; i < 300; i++) {
      workload.step();
    }
    live.abandon();
    Path segment;
    try (Stream<Path> files = Files.list(settings.directory())) {
      segment =
          files
              .filter(p -> p.getFileName().toString().endsWith(".tqj"))
              .sorted()
              .findFirst()
              .orElseThrow();
    }
    long size = Files.size(segment);
    try (FileChannel channel =
        FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      java.nio.ByteBuffer one = java.nio.ByteBuffer.allocate(1);
      long at = size / 2;
      channel.read(one.clear(), at);
      one.flip();
      byte flipped = (byte) (one.get(0) ^ 0x5a);
      channel.write(java.nio.ByteBuffer.wrap(new byte[] {flipped}), at);
    }
    assertThatThrownBy(
            () -> Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA);
              assertThat(e.getMessage()).contains(segment.getFileName().toString());
            });
  }

  @Test
  void shouldCutATornLastRecordAndRefuseAMissingSegment(@TempDir Path dir) throws IOException {
    JournalSettings settings = settings(dir, SyncPolicy.FSYNC);
    Controller live = Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings);
    ControllerWorkload workload = new ControllerWorkload(Seeds.seed(), live, false);
    for (int i = 0; i < 600; i++) {
      workload.step();
    }
    live.abandon();
    List<Path> segments;
    try (Stream<Path> files = Files.list(settings.directory())) {
      segments = files.filter(p -> p.getFileName().toString().endsWith(".tqj")).sorted().toList();
    }
    assertThat(segments).as("segments of 16 KiB").hasSizeGreaterThan(1);
    // A record cut short at the end of the last segment: a write the crash interrupted.
    Path last = segments.getLast();
    try (FileChannel channel = FileChannel.open(last, StandardOpenOption.WRITE)) {
      channel.truncate(channel.size() - 3);
    }
    Controller recovered =
        Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings);
    recovered.checkInvariants();
    recovered.abandon();
    Files.delete(segments.getFirst());
    assertThatThrownBy(
            () -> Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings))
        .isInstanceOfSatisfying(
            TqException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA));
  }

  @Test
  void shouldRefuseADamagedCheckpoint(@TempDir Path dir) throws IOException {
    JournalSettings settings = settings(dir, SyncPolicy.FSYNC);
    Controller live = Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings);
    live.getMetadata(GetMetadataRequest.insert("p", List.of("a"), 3));
    live.close();
    Path state;
    try (Stream<Path> files = Files.walk(settings.directory())) {
      state =
          files
              .filter(p -> p.getFileName().toString().equals("controller_state.msgpack"))
              .findFirst()
              .orElseThrow();
    }
    byte[] bytes = Files.readAllBytes(state);
    bytes[bytes.length / 2] ^= 0x01;
    Files.write(state, bytes);
    assertThatThrownBy(
            () -> Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings))
        .isInstanceOfSatisfying(
            TqException.class,
            e -> {
              assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA);
              assertThat(e.getMessage()).contains(state.toString());
            });
  }

  @Test
  void shouldReplayWithTheRecordedPreAllocationWhateverTheConfiguration(@TempDir Path dir) {
    JournalSettings settings = settings(dir, SyncPolicy.FSYNC);
    Controller live = Controller.recover(OPTIONS, new SequentialSampler(), Clock.SYSTEM, settings);
    live.getMetadata(GetMetadataRequest.insert("p", List.of("a"), 3));
    live.abandon();
    // Recovered with another pre-allocation the records still replay (they carry their own).
    ControllerOptions other =
        ControllerOptions.builder().preallocSampleNum(5).pollingMode(true).build();
    Controller recovered =
        Controller.recover(other, new SequentialSampler(), Clock.SYSTEM, settings);
    try {
      assertThat(recovered.getPartitionIndexRange("p").size()).isEqualTo(3);
    } finally {
      recovered.close();
    }
  }
}
