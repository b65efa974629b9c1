package org.transferqueue.remote;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.stream.Stream;
import org.transferqueue.remote.controller.ControllerProtocol;
import org.transferqueue.remote.objectstore.StoreNodeProtocol;
import org.transferqueue.remote.storage.StorageUnitProtocol;

/** The protocol tables of the remote services, for tests that go over every message type. */
public final class ProtocolTables {
  private ProtocolTables() {}

  /**
   * Every entry of every service's table, controller first.
   *
   * @return the entries
   */
  public static List<MessageType> all() {
    return Stream.of(
            ControllerProtocol.types(), StorageUnitProtocol.types(), StoreNodeProtocol.types())
        .flatMap(List::stream)
        .toList();
  }

  /**
   * The message type numbers of a table, in ascending order.
   *
   * @param table a service's entries
   * @return their numbers
   */
  public static List<Integer> typeIds(List<? extends MessageType> table) {
    return table.stream().map(MessageType::typeId).sorted().toList();
  }

  /**
   * Joins byte arrays, for hand-built (often malformed) messages.
   *
   * @param parts the arrays
   * @return their bytes one after the other
   */
  public static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] part : parts) {
      out.writeBytes(part);
    }
    return out.toByteArray();
  }
}
