package org.transferqueue.transport;

import org.transferqueue.codec.FrameDescriptor;

/**
 * The fields of a received frame header, copied out of the reader's scratch memory so that the
 * scratch can be reused for the metadata.
 */
record FrameHeader(
    int magic,
    int version,
    int type,
    int flags,
    long correlationId,
    long metadataLength,
    long bodyLength) {

  boolean isResponse() {
    return (flags & FrameDescriptor.FLAG_RESPONSE) != 0;
  }

  boolean isError() {
    return (flags & FrameDescriptor.FLAG_ERROR) != 0;
  }
}
