package org.transferqueue.config;

import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A network address {@code host:port} as written in configuration: a host name, an IPv4 address or
 * a bracketed IPv6 address, and a port in 0-65535. Port 0 means "any free port": a server told to
 * listen there binds an ephemeral port and reports the real one; clients cannot connect to it.
 *
 * <p>No name resolution happens here; the transport resolves when it connects or binds.
 *
 * @param host the host name or address (IPv6 without brackets)
 * @param port the port, 0-65535 (0 = any free port, for servers)
 */
public record HostPort(String host, int port) {

  /** The largest TCP port. */
  public static final int MAX_PORT = 65_535;

  private static final Pattern HOST_NAME =
      Pattern.compile(
          "(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
              + "(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.?");
  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]{2,45}(%[A-Za-z0-9_.-]+)?");

  /**
   * Validates the components.
   *
   * @throws IllegalArgumentException if the host is not a host name or address, or the port is out
   *     of range
   */
  public HostPort {
    Objects.requireNonNull(host, "host");
    if (!isValidHost(host)) {
      throw new IllegalArgumentException("host=\"" + host + "\" is not a host name or address");
    }
    if (port < 0 || port > MAX_PORT) {
      throw new IllegalArgumentException("port=" + port + " is not in [0, 65535]");
    }
  }

  /**
   * Parses {@code host:port} or {@code [ipv6]:port}.
   *
   * @param text the address; surrounding white space is ignored
   * @return the address
   * @throws IllegalArgumentException with a reason phrased to follow the value ("is not host:port")
   *     when the text is not an address
   */
  public static HostPort parse(String text) {
    String s = Objects.requireNonNull(text, "text").strip();
    String host;
    String portText;
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0 || close + 1 >= s.length() || s.charAt(close + 1) != ':') {
        throw new IllegalArgumentException("is not [ipv6]:port");
      }
      host = s.substring(1, close);
      portText = s.substring(close + 2);
    } else {
      int colon = s.lastIndexOf(':');
      if (colon < 0 || s.indexOf(':') != colon) {
        throw new IllegalArgumentException("is not host:port");
      }
      host = s.substring(0, colon);
      portText = s.substring(colon + 1);
    }
    if (!isValidHost(host)) {
      throw new IllegalArgumentException("has no valid host (host:port)");
    }
    int port;
    try {
      port = Integer.parseInt(portText);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("has no valid port (host:port, port 0-65535)", e);
    }
    if (port < 0 || port > MAX_PORT) {
      throw new IllegalArgumentException("has a port out of range (0-65535)");
    }
    return new HostPort(host, port);
  }

  /**
   * Tells whether a string is a host name, an IPv4 address or an IPv6 address (without brackets).
   *
   * @param host the candidate
   * @return true if it is syntactically a host
   */
  public static boolean isValidHost(String host) {
    if (host == null || host.isEmpty()) {
      return false;
    }
    if (host.indexOf(':') >= 0) {
      return IPV6.matcher(host).matches() && host.chars().filter(c -> c == ':').count() >= 2;
    }
    return HOST_NAME.matcher(host).matches();
  }

  /**
   * Renders a list of addresses for messages and files.
   *
   * @param addresses the addresses
   * @return their {@code host:port} forms
   */
  static List<String> render(List<HostPort> addresses) {
    return addresses.stream().map(HostPort::toString).toList();
  }

  /**
   * The address as {@code host:port}, with IPv6 hosts in brackets.
   *
   * @return the text form accepted by {@link #parse}
   */
  @Override
  public String toString() {
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }
}
