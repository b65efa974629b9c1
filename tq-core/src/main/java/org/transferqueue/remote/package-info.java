/**
 * The remote services of a multi-process deployment built on {@link org.transferqueue.transport}:
 * the msgpack encoding of metadata values shared by every service ({@link
 * org.transferqueue.remote.MetaCodec}) and the per-role servers and their clients.
 */
package org.transferqueue.remote;
