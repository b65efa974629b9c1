package org.transferqueue.server.stress;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.transferqueue.memory.BufferAllocator;
import org.transferqueue.memory.LeakCheckExtension;
import org.transferqueue.memory.NativeBuffer;
import org.transferqueue.testing.Seeds;

/** Checksummed rows: a good row passes, any changed byte or header is caught. */
@ExtendWith(LeakCheckExtension.class)
class StressPayloadTest {

  @Test
  void shouldPassAFilledRowAndReadItsHeader(BufferAllocator allocator) {
    try (NativeBuffer buffer = allocator.allocate(1027)) {
      MemorySegment row = buffer.segment();
      StressPayload.fill(row, 17, 4242, new SplittableRandom(1));

      assertThat(StressPayload.check(row)).isEqualTo(StressPayload.Verdict.OK);
      assertThat(StressPayload.clientId(row)).isEqualTo(17);
      assertThat(StressPayload.sequence(row)).isEqualTo(4242);
    }
  }

  @Test
  void shouldFailEverySingleFlippedByteOfTheRow(BufferAllocator allocator) {
    long seed = Seeds.seed();
    Random random = new Random(seed);
    try (NativeBuffer buffer = allocator.allocate(256)) {
      MemorySegment row = buffer.segment();
      StressPayload.fill(row, 3, 9, new SplittableRandom(seed));
      for (long offset = 0; offset < row.byteSize(); offset++) {
        byte original = row.get(ValueLayout.JAVA_BYTE, offset);
        byte flipped = (byte) (original ^ (1 << random.nextInt(8)));
        row.set(ValueLayout.JAVA_BYTE, offset, flipped);

        assertThat(StressPayload.check(row))
            .as("seed %d, byte %d flipped", seed, offset)
            .isNotEqualTo(StressPayload.Verdict.OK);
        row.set(ValueLayout.JAVA_BYTE, offset, original);
      }
      assertThat(StressPayload.check(row)).isEqualTo(StressPayload.Verdict.OK);
    }
  }

  @Test
  void shouldReportTheLengthWhenARowIsTruncated(BufferAllocator allocator) {
    try (NativeBuffer buffer = allocator.allocate(128)) {
      StressPayload.fill(buffer.segment(), 1, 1, new SplittableRandom(2));

      assertThat(StressPayload.check(buffer.segment().asSlice(0, 100)))
          .isEqualTo(StressPayload.Verdict.BAD_LENGTH);
      assertThat(StressPayload.check(buffer.segment().asSlice(0, 10)))
          .isEqualTo(StressPayload.Verdict.BAD_LENGTH);
    }
  }
}
