package org.transferqueue.server.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes one CSV row per iteration. The first eight columns are upstream perftest's, in its order
 * and units ({@code total_data_size_gb} is GiB, the rates are GiB x 8 per second); the columns
 * after them name the size, mode and iteration and give the GB/s figures and ratios. Stateless.
 */
public final class CsvReporter {
  /** The header line. */
  public static final String HEADER =
      "backend,device,total_data_size_gb,put_time,get_time,put_gbit_per_sec,get_gbit_per_sec,"
          + "total_gbit_per_sec,size,mode,iteration,put_gbyte_per_sec,get_gbyte_per_sec,"
          + "total_gbyte_per_sec,baseline_gbyte_per_sec,put_ratio,get_ratio,total_ratio";

  private CsvReporter() {}

  /**
   * The CSV text.
   *
   * @param report the report
   * @return the header and one line per iteration, each ending with {@code \n}
   */
  public static String render(BenchReport report) {
    StringBuilder out = new StringBuilder(HEADER).append('\n');
    for (SizeResult size : report.sizes()) {
      for (CaseResult c : size.cases()) {
        for (IterationResult r : c.iterations()) {
          out.append(
              String.join(
                  ",",
                  c.backend().configName(),
                  "cpu",
                  num(r.gib()),
                  num(r.putSeconds()),
                  num(r.getSeconds()),
                  num(r.putGbps()),
                  num(r.getGbps()),
                  num(r.totalGbps()),
                  size.size().name(),
                  c.mode().optionName(),
                  Integer.toString(r.iteration()),
                  num(r.putGbPerSec()),
                  num(r.getGbPerSec()),
                  num(r.totalGbPerSec()),
                  num(r.baselineGbPerSec()),
                  num(r.putRatio()),
                  num(r.getRatio()),
                  num(r.totalRatio())));
          out.append('\n');
        }
      }
    }
    return out.toString();
  }

  /** The shortest decimal text that reads back as exactly this double. */
  private static String num(double value) {
    return Double.toString(value);
  }

  /**
   * Writes the CSV text to a file, replacing it.
   *
   * @param report the report
   * @param file the target
   * @throws UncheckedIOException when the file cannot be written
   */
  public static void write(BenchReport report, Path file) {
    try {
      Files.writeString(file, render(report), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
