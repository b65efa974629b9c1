package org.transferqueue;

/**
 * Closes groups of resources so that one failure neither hides the others nor leaves a later
 * resource open. Stateless; thread-safe as far as the resources' own {@code close} methods are.
 */
public final class Closeables {
  private Closeables() {}

  /**
   * Closes every resource in iteration order, even when an earlier one fails.
   *
   * <p>The first failure is thrown once all resources were closed; later failures are added to it
   * as suppressed exceptions. A runtime exception is thrown as it is; a checked one is wrapped in a
   * {@link TqException} with {@link ErrorCode#INTERNAL}. {@code null} elements are skipped.
   *
   * @param resources the resources, in the order they must be closed
   * @throws RuntimeException the first failure, carrying the later ones as suppressed
   */
  public static void closeAll(Iterable<? extends AutoCloseable> resources) {
    RuntimeException failure = null;
    for (AutoCloseable resource : resources) {
      try {
        if (resource != null) {
          resource.close();
        }
      } catch (Exception e) {
        if (failure == null) {
          failure =
              e instanceof RuntimeException r
                  ? r
                  : new TqException(ErrorCode.INTERNAL, "close failed: " + e, e);
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
