package org.transferqueue.metrics;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Takes the failures of meters and collection steps, which must never reach a request: counts them
 * and logs each distinct failure (by where it happened and its type and message) once, at WARNING.
 *
 * <p>Thread-safe.
 */
public final class MetricsErrorHandler {
  private static final System.Logger LOG = System.getLogger(MetricsErrorHandler.class.getName());
  private static final int MAX_DISTINCT = 1024;

  private final LongAdder errors = new LongAdder();
  private final Set<String> logged = ConcurrentHashMap.newKeySet();

  /** Creates a handler with no errors. */
  public MetricsErrorHandler() {}

  /**
   * Records a failure.
   *
   * @param where what was being measured or collected, such as {@code "request GET_META"}
   * @param error the failure
   */
  public void onError(String where, Throwable error) {
    errors.increment();
    String key = where + ": " + error;
    if (logged.size() < MAX_DISTINCT && logged.add(key)) {
      LOG.log(System.Logger.Level.WARNING, "metrics failure in " + where + " (logged once)", error);
    }
  }

  /**
   * The number of failures so far.
   *
   * @return the count
   */
  public long errorCount() {
    return errors.sum();
  }
}
