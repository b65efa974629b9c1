package org.transferqueue.transport;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.transferqueue.codec.MsgpackWriter;

/**
 * The layout of a shared request's bodies in its grant ({@link SharedMessages#requestLayout}) and
 * the metadata section with explicit offsets (docs/PROTOCOL.md section 4.2). The two value vectors
 * of {@code python/tests/vectors/v1} that other clients check their own layout against are made
 * here ({@code WireVectorsTest} writes them with the frames).
 */
public class SharedRequestLayoutTest {
  /** The grant id of {@link #explicitOffsetsSection()}. */
  public static final long GRANT_ID = 1_234_567L;

  /** The seed of {@link #layoutCase()} and the first seed of the property test. */
  public static final long LAYOUT_SEED = 0x5A4EL;

  /** The application metadata of {@link #explicitOffsetsSection()}: msgpack {@code ["x"]}. */
  private static final byte[] APP_META = {(byte) 0x91, (byte) 0xa1, 'x'};

  /**
   * The PROTOCOL.md example: bodies of 100, 100 and 10 bytes, laid out at {@code [0, 100, 256]}.
   */
  private static final long[] EXAMPLE = {100, 100, 10};

  /**
   * The metadata section of a request with shared bodies and explicit offsets, for the example's
   * bodies in grant {@link #GRANT_ID}: body table, item {@code [grant_id, [0, 100, 256]]}, then the
   * application metadata {@code ["x"]}.
   */
  public static byte[] explicitOffsetsSection() {
    long[] layout = SharedMessages.requestLayout(EXAMPLE);
    return SharedMessages.sharedRequestSection(
        EXAMPLE, GRANT_ID, Arrays.copyOf(layout, EXAMPLE.length), APP_META);
  }

  /** Seeded lengths: runs of equal lengths (rows of dense fields), zero lengths included. */
  private static long[] lengths(Random random, int n) {
    long[] lengths = new long[n];
    for (int i = 0; i < n; i++) {
      boolean repeat = i > 0 && random.nextInt(3) != 0;
      lengths[i] = repeat ? lengths[i - 1] : random.nextInt(5) == 0 ? 0 : random.nextInt(1, 300);
    }
    return lengths;
  }

  /**
   * A seeded layout case as msgpack {@code [lengths, offsets]}: 200 body lengths and the {@code n +
   * 1} offsets {@link SharedMessages#requestLayout} gives them.
   */
  public static byte[] layoutCase() {
    long[] lengths = lengths(new Random(LAYOUT_SEED), 200);
    long[] layout = SharedMessages.requestLayout(lengths);
    MsgpackWriter out = new MsgpackWriter(4 * 1024);
    out.writeArrayHeader(2);
    for (long[] list : new long[][] {lengths, layout}) {
      out.writeArrayHeader(list.length);
      for (long v : list) {
        out.writeLong(v);
      }
    }
    return out.toByteArray();
  }

  @Test
  void shouldLayTheProtocolExampleOutAsDocumented() {
    assertThat(SharedMessages.requestLayout(EXAMPLE)).containsExactly(0, 100, 256, 266);
    assertThat(SharedMessages.requestLayout(new long[0])).containsExactly(0);
  }

  @Test
  void shouldKeepSameLengthBodiesBackToBackAndAlignTheOthers() {
    for (long seed = LAYOUT_SEED; seed < LAYOUT_SEED + 50; seed++) {
      Random random = new Random(seed);
      long[] lengths = lengths(random, 1 + random.nextInt(60));
      long[] layout = SharedMessages.requestLayout(lengths);
      long end = 0;
      for (int i = 0; i < lengths.length; i++) {
        boolean follows = i > 0 && lengths[i] == lengths[i - 1];
        assertThat(layout[i])
            .as("seed=%d body %d", seed, i)
            .isEqualTo(follows ? end : SharedMessages.align64(end));
        end = layout[i] + lengths[i];
      }
      assertThat(layout[lengths.length]).as("seed=%d end", seed).isEqualTo(end);
      assertThat(
              SharedMessages.checkRequestOffsets(
                  Arrays.copyOf(layout, lengths.length), lengths, end, 1))
          .isEqualTo(end);
    }
  }

  @Test
  void shouldDecodeTheExplicitOffsetsOfTheSection() {
    byte[] section = explicitOffsetsSection();
    // body table [100, 100, 10], then the item and the application metadata
    assertThat(Arrays.copyOf(section, 4)).containsExactly(0x93, 100, 100, 10);
    byte[] afterTable = Arrays.copyOfRange(section, 4, section.length);
    SharedMessages.SharedItem item = SharedMessages.decodeItem(afterTable, false, 3, "test");
    assertThat(item.id()).isEqualTo(GRANT_ID);
    assertThat(item.offsets()).containsExactly(0, 100, 256);
    assertThat(item.applicationMetadata()).containsExactly(APP_META);
  }
}
