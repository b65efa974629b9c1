/**
 * The stress harness behind {@code tq stress}: many concurrent clients on virtual threads that put,
 * fetch through the controller's sampler, get, verify checksummed rows and clear, on their own
 * partitions and one shared partition, counting operations, bytes, latencies, errors by code, lost
 * and corrupted rows, and the peak memory of every process.
 */
package org.transferqueue.server.stress;
