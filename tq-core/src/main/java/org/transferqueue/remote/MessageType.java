package org.transferqueue.remote;

/**
 * One entry of a remote service's protocol table: the message type number the frame header carries
 * and the name docs/PROTOCOL.md and the logs use for it. Each service lists its entries once, in
 * its {@code *Protocol} class, and both its client proxy and its server adapter are built from that
 * list.
 */
public interface MessageType {
  /**
   * The message type number on the wire.
   *
   * @return the number, within the service's range (controller 100-199, storage unit 200-299, store
   *     node 300-399)
   */
  int typeId();

  /**
   * The name of the message type, as docs/PROTOCOL.md spells it.
   *
   * @return the name, such as {@code GET_METADATA}
   */
  String name();
}
