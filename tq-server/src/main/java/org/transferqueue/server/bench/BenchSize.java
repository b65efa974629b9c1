package org.transferqueue.server.bench;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * One data size of the workload: {@code batch} keys, each with {@code fields} fields of up to
 * {@code seqLen} elements.
 *
 * @param name the preset name ({@code tiny}, {@code small}, {@code medium}) or {@code custom}
 * @param batch keys per global batch (upstream's {@code global_batch_size}), at least 1
 * @param fields fields per key (upstream's {@code field_num}), at least 1
 * @param seqLen elements per regular row and the longest jagged row (upstream's {@code seq_len}),
 *     at least 1
 */
public record BenchSize(String name, int batch, int fields, int seqLen) {
  /** The CI preset: 128 keys x 4 fields x 1024 float32 values (2 MiB). */
  public static final BenchSize TINY = new BenchSize("tiny", 128, 4, 1024);

  /** The default preset: 1024 keys x 9 fields x 8192 float32 values (288 MiB). */
  public static final BenchSize SMALL = new BenchSize("small", 1024, 9, 8192);

  /** The large preset: 4096 keys x 15 fields x 32768 float32 values (7.5 GiB). */
  public static final BenchSize MEDIUM = new BenchSize("medium", 4096, 15, 32768);

  /** Every preset, smallest first. */
  public static final List<BenchSize> PRESETS = List.of(TINY, SMALL, MEDIUM);

  /**
   * Validates the components.
   *
   * @throws TqException {@code INVALID_ARGUMENT} naming a count below 1
   */
  public BenchSize {
    Objects.requireNonNull(name, "name");
    if (batch < 1 || fields < 1 || seqLen < 1) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "size '"
              + name
              + "': batch="
              + batch
              + ", fields="
              + fields
              + ", seqLen="
              + seqLen
              + " must all be at least 1");
    }
  }

  /**
   * The preset of a name.
   *
   * @param name {@code tiny}, {@code small} or {@code medium}, in any case
   * @return the preset
   * @throws TqException {@code INVALID_ARGUMENT} naming the value and the presets
   */
  public static BenchSize preset(String name) {
    String wanted = name.trim().toLowerCase(Locale.ROOT);
    for (BenchSize preset : PRESETS) {
      if (preset.name.equals(wanted)) {
        return preset;
      }
    }
    throw new TqException(
        ErrorCode.INVALID_ARGUMENT, "unknown preset '" + name + "' (presets: tiny, small, medium)");
  }

  /**
   * This size with some counts replaced; the name becomes {@code custom} when anything changes.
   *
   * @param batchOverride the new batch, or null to keep it
   * @param fieldsOverride the new field count, or null to keep it
   * @param seqLenOverride the new sequence length, or null to keep it
   * @return the resulting size
   */
  public BenchSize withOverrides(
      Integer batchOverride, Integer fieldsOverride, Integer seqLenOverride) {
    int b = batchOverride == null ? batch : batchOverride;
    int f = fieldsOverride == null ? fields : fieldsOverride;
    int s = seqLenOverride == null ? seqLen : seqLenOverride;
    if (b == batch && f == fields && s == seqLen) {
      return this;
    }
    return new BenchSize("custom", b, f, s);
  }

  /**
   * A label for tables and charts, such as {@code small (1024x9x8192)}.
   *
   * @return the label
   */
  public String label() {
    return name + " (" + batch + "x" + fields + "x" + seqLen + ")";
  }
}
