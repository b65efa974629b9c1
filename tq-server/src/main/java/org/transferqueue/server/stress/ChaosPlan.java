package org.transferqueue.server.stress;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/**
 * What {@code tq stress --chaos} does to the server processes of a loopback run: which kinds of
 * role it kills, how often, and the durability the processes run with.
 *
 * @param roles the kinds of role killed, taken in turn (in declaration order of {@link ChaosRole});
 *     within a kind the ranks take turns
 * @param interval the time between two kills, the first one interval after the clients start
 * @param journal whether the controller and the storage processes journal every acknowledged change
 *     ({@code controller.durability} and {@code storage.durability: journal}); without it ({@code
 *     --durability none}) a killed role restarts empty, which the run reports as lost rows
 * @param journalDir the base directory of the journals ({@code durability.journal_dir}); empty: a
 *     new temporary directory per backend, deleted after the run
 * @param sync the journal's sync policy ({@code fsync} or {@code interval}); empty: the journal's
 *     default
 * @param recoveryTimeout how long a client retries a read, a clear or a check of acknowledged rows
 *     while a role is down or recovering before it counts them as lost
 */
public record ChaosPlan(
    Set<ChaosRole> roles,
    Duration interval,
    boolean journal,
    Optional<Path> journalDir,
    Optional<String> sync,
    Duration recoveryTimeout) {

  /** Validates every value; the messages name the option. */
  public ChaosPlan {
    if (roles == null || roles.isEmpty()) {
      throw new TqException(ErrorCode.INVALID_ARGUMENT, "--chaos-role: at least one role");
    }
    roles = Collections.unmodifiableSet(EnumSet.copyOf(roles));
    if (interval == null || interval.toMillis() < 1) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "--chaos-interval=" + interval + " is not a positive duration of at least 1 ms");
    }
    if (recoveryTimeout == null || recoveryTimeout.toMillis() < 1) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "--recovery-timeout=" + recoveryTimeout + " is not a positive duration");
    }
    sync = sync.map(s -> s.trim().toLowerCase(Locale.ROOT));
    if (sync.isPresent() && !sync.get().equals("fsync") && !sync.get().equals("interval")) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "--journal-sync=" + sync.get() + " is not one of [fsync, interval]");
    }
    if (!journal && (journalDir.isPresent() || sync.isPresent())) {
      throw new TqException(
          ErrorCode.INVALID_ARGUMENT,
          "--journal-dir and --journal-sync apply only with --durability journal");
    }
  }

  /**
   * The durability mode as the configuration names it.
   *
   * @return {@code journal} or {@code none}
   */
  public String durability() {
    return journal ? "journal" : "none";
  }

  /**
   * The configuration sections that make the children journal into {@code dir} (empty without the
   * journal): {@code controller.durability}, {@code storage.durability} and {@code durability}.
   *
   * @param dir the base directory of this run's journals
   * @return YAML of top-level sections, or ""
   */
  public String yaml(Path dir) {
    if (!journal) {
      return "";
    }
    StringBuilder y = new StringBuilder();
    y.append("controller:\n  durability: journal\n");
    y.append("storage:\n  durability: journal\n");
    // A double-quoted YAML scalar: backslashes and quotes of the path escaped.
    String quoted = dir.toString().replace("\\", "\\\\").replace("\"", "\\\"");
    y.append("durability:\n  journal_dir: \"").append(quoted).append("\"\n");
    sync.ifPresent(s -> y.append("  sync: ").append(s).append('\n'));
    return y.toString();
  }
}
