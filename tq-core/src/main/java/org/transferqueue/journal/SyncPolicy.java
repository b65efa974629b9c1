package org.transferqueue.journal;

import java.util.Locale;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/** When the journal forces its writes to the disk, and so what a crash can lose. */
public enum SyncPolicy {
  /**
   * One {@code fsync} per group commit, before any append of the group completes: an acknowledged
   * record survives a crash of the process, of the operating system and a power loss.
   */
  FSYNC,
  /**
   * An append completes once its group is written to the file (the page cache): a killed process
   * loses nothing, an operating-system crash or a power loss loses at most the records of the last
   * {@link JournalSettings#syncInterval()}, which the writer forces to disk periodically.
   */
  INTERVAL;

  /**
   * The policy named by a configuration value.
   *
   * @param name {@code fsync} or {@code interval} (case-insensitive)
   * @return the policy
   * @throws TqException {@link ErrorCode#INVALID_CONFIGURATION} naming the value when it is neither
   */
  public static SyncPolicy fromName(String name) {
    String lower = name == null ? "" : name.trim().toLowerCase(Locale.ROOT);
    return switch (lower) {
      case "fsync" -> FSYNC;
      case "interval" -> INTERVAL;
      default ->
          throw new TqException(
              ErrorCode.INVALID_CONFIGURATION,
              "durability.sync must be fsync or interval, got '" + name + "'");
    };
  }

  /**
   * The configuration name of this policy.
   *
   * @return {@code fsync} or {@code interval}
   */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }
}
