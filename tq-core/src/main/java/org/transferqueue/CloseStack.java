package org.transferqueue;

import java.util.ArrayList;
import java.util.List;

/**
 * Cleans up a start-up that fails half-way: push each resource as it starts, {@link #release()}
 * once everything started, and let try-with-resources close the stack. On the failure path the
 * resources are closed in reverse order of their push (STYLE §5), every one of them even when an
 * earlier close fails, and the close failures are attached to the start-up's failure as suppressed
 * exceptions. After {@link #release()} closing does nothing: the resources now belong to whatever
 * was built from them.
 *
 * <pre>{@code
 * try (CloseStack cleanup = new CloseStack()) {
 *   RootAllocator allocator = cleanup.push(RootAllocator.builder().build());
 *   StorageUnit unit = cleanup.push(new StorageUnit(id, capacity, allocator, limit));
 *   Server server = cleanup.push(Server.start(unit, allocator));
 *   cleanup.release();
 *   return new Role(server, unit, allocator);
 * }
 * }</pre>
 *
 * <p>Not thread-safe: one stack belongs to the thread that starts the resources.
 */
public final class CloseStack implements AutoCloseable {
  private final List<AutoCloseable> resources = new ArrayList<>();
  private boolean released;

  /** Creates an empty stack. */
  public CloseStack() {}

  /**
   * Adds a resource that was just started; it is closed before every resource pushed earlier.
   *
   * @param resource the resource, or null (then nothing is added)
   * @param <T> its type
   * @return {@code resource}, so that a start-up reads {@code x = cleanup.push(start())}
   * @throws IllegalStateException if the stack was released or closed
   */
  public <T extends AutoCloseable> T push(T resource) {
    if (released) {
      throw new IllegalStateException("push after release or close of " + this);
    }
    if (resource != null) {
      resources.add(resource);
    }
    return resource;
  }

  /** Hands the pushed resources over to their new owner: {@link #close()} leaves them open. */
  public void release() {
    released = true;
    resources.clear();
  }

  /**
   * Closes the pushed resources in reverse order unless the stack was released; idempotent.
   *
   * @throws RuntimeException the first close failure, carrying later ones as suppressed (a checked
   *     one wrapped as in {@link Closeables#closeAll})
   */
  @Override
  public void close() {
    if (released) {
      return;
    }
    released = true;
    List<AutoCloseable> reversed = new ArrayList<>(resources.reversed());
    resources.clear();
    Closeables.closeAll(reversed);
  }

  @Override
  public String toString() {
    return "CloseStack[resources=" + resources.size() + ", released=" + released + "]";
  }
}
