package org.transferqueue.config;

import java.util.Locale;

/** The transfer protocol of the object-store client ({@code backend.MooncakeStore.protocol}). */
public enum TransportProtocol {
  /** TCP sockets. */
  TCP,
  /** RDMA verbs. */
  RDMA;

  /**
   * The name used in configuration files.
   *
   * @return {@code tcp} or {@code rdma}
   */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Looks a protocol up by its configuration name (exact, lower case, as upstream).
   *
   * @param name the configured name
   * @return the protocol
   * @throws IllegalArgumentException with a reason phrased to follow the value when unknown
   */
  public static TransportProtocol fromConfigName(String name) {
    for (TransportProtocol p : values()) {
      if (p.configName().equals(name)) {
        return p;
      }
    }
    throw new IllegalArgumentException("is not a protocol (tcp or rdma)");
  }
}
