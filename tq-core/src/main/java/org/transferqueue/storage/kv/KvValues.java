package org.transferqueue.storage.kv;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Values read by a {@link KvClient}, aligned with the requested keys, together with the memory they
 * live in.
 *
 * <p>Tensors among the values (at the top or inside object values) are views of memory this object
 * owns: they are valid until {@link #close()}, after which they must not be used. Callers that keep
 * values copy them first. {@link #close()} is idempotent and thread-safe.
 */
public final class KvValues implements AutoCloseable {
  private final List<Object> values;
  private final List<AutoCloseable> resources;
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Creates the result.
   *
   * @param values one value per key ({@code null} allowed)
   * @param resources what to close, in reverse order, when the values are no longer needed; the
   *     result takes ownership
   */
  public KvValues(List<?> values, List<? extends AutoCloseable> resources) {
    this.values = Collections.unmodifiableList(new ArrayList<>(values));
    this.resources = List.copyOf(Objects.requireNonNull(resources, "resources"));
  }

  /**
   * The values, one per key, in key order.
   *
   * @return an unmodifiable list, valid until {@link #close()}
   */
  public List<Object> values() {
    return values;
  }

  /**
   * The number of values.
   *
   * @return the size
   */
  public int size() {
    return values.size();
  }

  /** Releases the memory behind the values, in reverse order; later failures are suppressed. */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    RuntimeException failure = null;
    for (int i = resources.size() - 1; i >= 0; i--) {
      try {
        resources.get(i).close();
      } catch (Exception e) {
        RuntimeException wrapped =
            e instanceof RuntimeException r ? r : new IllegalStateException(e.getMessage(), e);
        if (failure == null) {
          failure = wrapped;
        } else {
          failure.addSuppressed(wrapped);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
