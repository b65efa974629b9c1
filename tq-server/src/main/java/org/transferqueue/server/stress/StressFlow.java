package org.transferqueue.server.stress;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.transferqueue.ErrorCode;
import org.transferqueue.TqException;

/** The flows a stress client repeats, in this order, in every round. */
public enum StressFlow {
  /** Put, fetch, get, verify and clear on the client's own partition. */
  OWN,
  /** Put, fetch (usually other clients' rows), get, verify and clear on the shared partition. */
  SHARED,
  /** Key-value batch put, get by key, verify and clear on the shared key-value partition. */
  KV;

  /**
   * The name used on the command line and in reports.
   *
   * @return {@code own}, {@code shared} or {@code kv}
   */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Parses a comma-separated list of flow names.
   *
   * @param value e.g. {@code own,shared,kv} or {@code all}
   * @return the flows, at least one
   * @throws TqException {@code INVALID_ARGUMENT} naming an unknown flow or an empty list
   */
  public static Set<StressFlow> parse(String value) {
    if (value.trim().equalsIgnoreCase("all")) {
      return EnumSet.allOf(StressFlow.class);
    }
    Set<StressFlow> flows = EnumSet.noneOf(StressFlow.class);
    for (String word : value.split(",")) {
      String name = word.trim();
      StressFlow found = null;
      for (StressFlow flow : values()) {
        if (flow.label().equalsIgnoreCase(name)) {
          found = flow;
        }
      }
      if (found == null) {
        List<String> choices = new ArrayList<>();
        for (StressFlow flow : values()) {
          choices.add(flow.label());
        }
        throw new TqException(
            ErrorCode.INVALID_ARGUMENT,
            "--flows: unknown flow '" + name + "' (choose from " + choices + " or all)");
      }
      flows.add(found);
    }
    return flows;
  }
}
