/**
 * Request/response messaging over TCP for the multi-process deployment: frames over blocking {@link
 * java.nio.channels.SocketChannel}s on virtual threads, a generic {@link
 * org.transferqueue.transport.TransportServer} that dispatches requests by message type to {@link
 * org.transferqueue.transport.RequestHandler}s, and a {@link
 * org.transferqueue.transport.TransportClient} with pooled, pipelined connections and a deadline on
 * every call.
 *
 * <p>Frames follow {@link org.transferqueue.codec.FrameDescriptor}; the metadata section carries a
 * body table and the application metadata ({@link org.transferqueue.transport.MessageDescriptor}).
 * Tensor bytes never pass through the heap: request bodies are written with gathering writes
 * straight from their segments, reply bodies are read with scattering reads straight into the
 * destination the caller chose ({@link org.transferqueue.transport.BodyDestination}), the Java form
 * of {@code batch_upsert_from} and {@code batch_get_into}. Role-specific servers (controller,
 * storage unit, store node) are built on this package and define their own message types.
 *
 * <p>Same host: a server offers a pool of shared-memory segments ({@link
 * org.transferqueue.memory.SharedMemoryPool}); a client that proves at HELLO that it maps them
 * (SHM_ATTACH) moves frame bodies through granted regions instead of the socket, in both
 * directions, below the handlers: a handler sees its request bodies as usual (slices of the granted
 * region), and a reply body that already lies in the pool is leased in place. Everything else, and
 * every peer that cannot map the segments, stays on TCP (docs/PROTOCOL.md section 4.2).
 */
package org.transferqueue.transport;
