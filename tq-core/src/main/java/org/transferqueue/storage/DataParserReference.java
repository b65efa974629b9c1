package org.transferqueue.storage;

import java.util.Map;
import java.util.Objects;

/**
 * Names a data parser registered on the storage units, with its arguments.
 *
 * <p>Closures cannot travel between processes, so a put carries this reference instead of code; the
 * storage unit resolves {@link #name()} in its parser registry and runs the parser on its share of
 * the put's rows before storing them. Only SimpleStorage supports parsers. Immutable.
 *
 * @param name the registered parser name
 * @param args the parser's arguments (copied)
 */
public record DataParserReference(String name, Map<String, String> args) {

  /** Copies the arguments and rejects nulls. */
  public DataParserReference {
    Objects.requireNonNull(name, "name");
    args = Map.copyOf(args);
  }

  /**
   * A reference without arguments.
   *
   * @param name the registered parser name
   * @return the reference
   */
  public static DataParserReference of(String name) {
    return new DataParserReference(name, Map.of());
  }
}
