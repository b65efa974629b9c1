package org.transferqueue.server.stress;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;
import org.transferqueue.server.bench.BenchBackend;

/** The kinds of server process {@code tq stress --chaos} kills, named as their {@code tq} roles. */
public enum ChaosRole {
  /** The controller ({@code tq controller}), in every backend's run. */
  CONTROLLER,
  /** A SimpleStorage unit ({@code tq storage-unit}). */
  STORAGE_UNIT,
  /** A MooncakeStore node ({@code tq store-node}). */
  STORE_NODE;

  /**
   * The name used on the command line, in reports and as the {@code tq} subcommand of the role.
   *
   * @return {@code controller}, {@code storage-unit} or {@code store-node}
   */
  public String label() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /**
   * Whether the servers of a backend include processes of this kind.
   *
   * @param backend the backend
   * @return true for the controller and for the backend's own storage role
   */
  public boolean runsIn(BenchBackend backend) {
    return switch (this) {
      case CONTROLLER -> true;
      case STORAGE_UNIT -> backend == BenchBackend.SIMPLE_STORAGE;
      case STORE_NODE -> backend == BenchBackend.MOONCAKE_STORE;
    };
  }

  /**
   * The role of a {@code tq} subcommand.
   *
   * @param label a {@link #label()}
   * @return the role
   * @throws TqException {@code INVALID_ARGUMENT} naming the label and the choices
   */
  public static ChaosRole fromLabel(String label) {
    for (ChaosRole role : values()) {
      if (role.label().equalsIgnoreCase(label.trim())) {
        return role;
      }
    }
    List<String> choices = new ArrayList<>();
    for (ChaosRole role : values()) {
      choices.add(role.label());
    }
    throw new TqException(
        ErrorCode.INVALID_ARGUMENT,
        "--chaos-role: unknown role '" + label + "' (choose from " + choices + " or all)");
  }

  /**
   * Parses a comma-separated list of roles.
   *
   * @param value e.g. {@code controller,storage-unit} or {@code all}
   * @return the roles, at least one
   * @throws TqException {@code INVALID_ARGUMENT} naming an unknown role
   */
  public static Set<ChaosRole> parse(String value) {
    if (value.trim().equalsIgnoreCase("all")) {
      return EnumSet.allOf(ChaosRole.class);
    }
    Set<ChaosRole> roles = EnumSet.noneOf(ChaosRole.class);
    for (String word : value.split(",")) {
      roles.add(fromLabel(word));
    }
    return roles;
  }
}
