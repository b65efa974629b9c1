package org.transferqueue.server.bench;

/**
 * Receives the progress of a run, for a progress display. Called on the runner's thread, before
 * each step starts and once at the end; implementations must return quickly.
 */
@FunctionalInterface
public interface BenchListener {
  /** A listener that ignores everything. */
  BenchListener NONE = (activity, completed, total) -> {};

  /**
   * A step is starting (or, with {@code completed == total}, the run is over).
   *
   * @param activity what is starting, e.g. {@code small SimpleStorage/embedded iteration 2/4 get}
   * @param completed steps finished so far
   * @param total steps of the whole run
   */
  void onStep(String activity, int completed, int total);
}
