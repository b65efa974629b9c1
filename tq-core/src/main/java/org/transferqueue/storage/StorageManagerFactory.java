package org.transferqueue.storage;

/** Creates a {@link StorageManager} of one backend; registered by name. */
@FunctionalInterface
public interface StorageManagerFactory {
  /**
   * Creates a manager.
   *
   * @param context allocator, notifier and configuration
   * @return a manager the caller owns and must close
   * @throws org.transferqueue.TqException with {@code INVALID_CONFIGURATION} naming a bad key
   */
  StorageManager create(StorageContext context);
}
