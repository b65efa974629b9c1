package org.transferqueue.cli;

import java.io.PrintWriter;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.transferqueue.Clock;
import org.transferqueue.server.bench.BenchListener;

/**
 * The progress display of {@code tq bench}: on a terminal a bar redrawn in place five times a
 * second with the current step and its elapsed time; elsewhere one line per started case and
 * iteration.
 */
final class BenchProgress implements BenchListener, AutoCloseable {
  private static final int WIDTH = 30;

  private final PrintWriter out;
  private final boolean live;
  private final ScheduledExecutorService ticker;
  private final Clock clock = Clock.SYSTEM;
  private volatile String activity = "";
  private volatile int completed;
  private volatile int total = 1;
  private volatile long stepStartedNs = clock.nanoTime();

  BenchProgress(PrintWriter out, boolean live) {
    this.out = out;
    this.live = live;
    this.ticker = live ? Executors.newSingleThreadScheduledExecutor() : null;
    if (live) {
      ticker.scheduleAtFixedRate(this::render, 200, 200, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void onStep(String activity, int completed, int total) {
    this.activity = activity;
    this.completed = completed;
    this.total = Math.max(1, total);
    this.stepStartedNs = clock.nanoTime();
    if (live) {
      render();
    } else if (!activity.endsWith(" list")
        && !activity.endsWith(" get")
        && !activity.endsWith(" clear")
        && !activity.equals("done")) {
      synchronized (out) {
        out.println(line());
        out.flush();
      }
    }
  }

  String line() {
    int filled = (int) ((long) completed * WIDTH / total);
    double seconds = (clock.nanoTime() - stepStartedNs) / 1e9;
    return String.format(
        "[%s%s] %3d%% %s (%.1f s)",
        "#".repeat(filled), ".".repeat(WIDTH - filled), completed * 100 / total, activity, seconds);
  }

  private void render() {
    synchronized (out) {
      // Pad so that a shorter line fully covers the previous one.
      out.print("\r" + String.format("%-110s", line()));
      out.flush();
    }
  }

  /** Stops the display and ends its line. */
  @Override
  public void close() {
    if (ticker != null) {
      ticker.close();
      synchronized (out) {
        out.print("\r" + String.format("%-110s", line()) + "\n");
        out.flush();
      }
    }
  }
}
