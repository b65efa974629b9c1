/**
 * Binary layouts and value encodings: the transport frame header ({@link
 * org.transferqueue.codec.FrameDescriptor}, {@link org.transferqueue.codec.FrameHeaderFlyweight}),
 * the packed-buffer format that stores several frames as one byte string ({@link
 * org.transferqueue.codec.PackedBufferDescriptor}, {@link
 * org.transferqueue.codec.PackedBufferWriter}, {@link org.transferqueue.codec.PackedBufferReader})
 * and the msgpack encoding of object values with tensors carried in aux frames.
 *
 * <p>Everything here works on {@link java.lang.foreign.MemorySegment}s and is tested without
 * sockets; the transport layer moves the bytes. Malformed input is reported as a {@link
 * org.transferqueue.ProtocolException} (frames) or a {@link org.transferqueue.TqException} with
 * {@link org.transferqueue.ErrorCode#CORRUPT_DATA} (stored values), never as an out-of-bounds read.
 */
package org.transferqueue.codec;
