package org.transferqueue.remote;

/**
 * Metadata layouts several messages of the storage-unit and store-node services share: no arguments
 * ({@code []}) and a single count ({@code [count]}).
 */
public final class CommonMessages {
  private CommonMessages() {}

  /**
   * The request metadata of a message without arguments.
   *
   * @return {@code []}
   */
  public static byte[] noArguments() {
    return new Wire.Writer().array(0).toBytes();
  }

  /**
   * Checks that a request has no arguments.
   *
   * @param metadata the request's metadata
   * @param what names the message in the error
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} unless it is {@code []}
   */
  public static void checkNoArguments(byte[] metadata, String what) {
    try (Wire.Reader in = new Wire.Reader(metadata, what)) {
      if (in.array() != 0) {
        throw in.malformed("expected []");
      }
    }
  }

  /**
   * A reply holding one count.
   *
   * @param count the count
   * @return {@code [count]}
   */
  public static byte[] count(long count) {
    return new Wire.Writer().array(1).i64(count).toBytes();
  }

  /**
   * Reads a reply holding one count.
   *
   * @param metadata the reply's metadata
   * @param what names the reply in the error
   * @return the count
   * @throws org.transferqueue.ProtocolException {@code PROTOCOL_ERROR} if it is not a count
   */
  public static long count(byte[] metadata, String what) {
    try (Wire.Reader in = new Wire.Reader(metadata, what)) {
      in.array();
      return in.i64();
    }
  }
}
