package org.transferqueue.cli;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Counters of one pipeline stage, updated by its workers (record is synchronized, so a stage may
 * have several) and read by the progress display.
 */
final class StageProgress {
  final String name;
  final AtomicLong samples = new AtomicLong();
  final AtomicLong bytes = new AtomicLong();
  final AtomicLong busyNanos = new AtomicLong();
  volatile long stepSamples;
  volatile long stepTarget;

  StageProgress(String name) {
    this.name = name;
  }

  void startStep(long target) {
    stepSamples = 0;
    stepTarget = target;
  }

  synchronized void record(long rows, long byteCount, long nanos) {
    samples.addAndGet(rows);
    bytes.addAndGet(byteCount);
    busyNanos.addAndGet(nanos);
    stepSamples += rows;
  }

  String bar(int width) {
    long target = Math.max(1, stepTarget);
    int filled = (int) Math.min(width, stepSamples * width / target);
    return name
        + " ["
        + "#".repeat(filled)
        + ".".repeat(width - filled)
        + "] "
        + stepSamples
        + "/"
        + stepTarget;
  }

  /** One row of the closing summary; rates are over the time the stage spent moving data. */
  String summaryRow() {
    double seconds = Math.max(1e-9, busyNanos.get() / 1e9);
    return String.format(
        "  %-10s %10d %14d %10.3f %14.0f %10.3f",
        name,
        samples.get(),
        bytes.get(),
        seconds,
        samples.get() / seconds,
        bytes.get() / seconds / 1e9);
  }
}
