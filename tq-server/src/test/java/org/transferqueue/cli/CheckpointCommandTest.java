package org.transferqueue.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.transferqueue.cli.RunningSystem.Result;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;

/**
 * {@code tq checkpoint save|load} in-process against a controller server and two storage-unit
 * servers on loopback ports: a round trip restores values and statuses, a corrupt checkpoint
 * changes nothing.
 */
@ExtendWith(LeakCheckExtension.class)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CheckpointCommandTest {
  private RunningSystem system;
  private Path dir;

  @BeforeEach
  void start(BufferAllocator allocator, @TempDir Path dir) {
    this.dir = dir;
    system = new RunningSystem(allocator, dir, 2);
  }

  @AfterEach
  void stop() {
    system.close();
  }

  private Result ok(String... args) {
    Result result = system.tq(args);
    assertThat(result.status())
        .as("tq %s: out=%s err=%s", String.join(" ", args), result.out(), result.err())
        .isZero();
    assertThat(result.err()).isEmpty();
    return result;
  }

  private void put(String key, String value) {
    ok(
        "kv",
        "put",
        "--partition",
        "train",
        "--key",
        key,
        "x=float32:" + value,
        "note=\"" + key + "\"",
        "--tag",
        "score=0.5");
  }

  private String everything() {
    return ok("kv", "get", "--partition", "train", "--key", "k1", "--key", "k2", "--json").out()
        + ok("kv", "list", "--json").out()
        + ok("status", "--json").out().replaceAll("\"storage_units\".*", "");
  }

  @Test
  void shouldRestoreValuesTagsAndStatusesAfterSaveClearLoad() {
    put("k1", "[[1,2.5],[3,4]]");
    put("k2", "[[5,6],[7,8]]");
    String before = everything();
    Path ckpt = dir.resolve("ckpt/step_1");

    Result saved = ok("checkpoint", "save", "--dir", ckpt.toString());
    assertThat(saved.out()).startsWith("saved checkpoint " + ckpt.toAbsolutePath());
    assertThat(ckpt.resolve("MANIFEST")).exists();
    assertThat(ckpt.resolve("controller_state.msgpack")).exists();
    assertThat(ckpt.resolve("simple_storage/storage_unit_info.json")).exists();
    assertThat(ckpt.resolve("simple_storage/su_0_TQ_STORAGE_UNIT_0.ckpt")).exists();
    assertThat(ckpt.resolve("simple_storage/su_1_TQ_STORAGE_UNIT_1.ckpt")).exists();

    ok("kv", "clear", "--partition", "train", "--key", "k1", "--key", "k2");
    assertThat(system.units).allSatisfy(u -> assertThat(u.stats().samples()).isZero());

    Result loaded = ok("checkpoint", "load", "--dir", ckpt.toString());
    assertThat(loaded.out()).isEqualTo("loaded checkpoint " + ckpt.toAbsolutePath() + "\n");
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void shouldLeaveTheSystemUnchangedWhenAUnitFileIsCorrupt() throws IOException {
    put("k1", "[[1,2.5],[3,4]]");
    Path ckpt = dir.resolve("ckpt");
    ok("checkpoint", "save", "--dir", ckpt.toString());
    put("k2", "[[5,6],[7,8]]");
    String before = everything();
    Path unitFile;
    try (Stream<Path> files = Files.list(ckpt.resolve("simple_storage"))) {
      unitFile = files.filter(f -> f.toString().endsWith(".ckpt")).sorted().toList().getLast();
    }
    byte[] bytes = Files.readAllBytes(unitFile);
    bytes[bytes.length - 1] ^= 0x5A;
    Files.write(unitFile, bytes);

    Result failed = system.tq("checkpoint", "load", "--dir", ckpt.toString());

    assertThat(failed.status()).isOne();
    assertThat(failed.out()).isEmpty();
    assertThat(failed.err().lines().toList())
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .startsWith("tq checkpoint load: error: corrupt checkpoint")
        .contains(ckpt.relativize(unitFile).toString().replace('\\', '/'));
    assertThat(everything()).isEqualTo(before);
  }

  @Test
  void shouldFailWithStatusOneWhenTheDirectoryIsNotACheckpoint() {
    Result failed = system.tq("checkpoint", "load", "--dir", dir.resolve("absent").toString());

    assertThat(failed.status()).isOne();
    assertThat(failed.err()).contains("checkpoint directory not found");
    assertThat(List.of(failed.out())).containsExactly("");
  }
}
