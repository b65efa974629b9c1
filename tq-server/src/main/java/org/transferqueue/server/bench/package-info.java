/**
 * The performance harness behind {@code tq bench}: the key-value workload of the upstream perftest
 * (batch put, list, batch get and clear of one global batch per iteration), a runner over a matrix
 * of storage backends and deployment modes (in this JVM, or the servers as child processes on
 * 127.0.0.1), the baseline each mode's figures are compared with (a memory copy, or a raw loopback
 * socket to a receiver process), and reporters (text table, JSON, CSV with the upstream columns,
 * PNG chart).
 *
 * <p>Nothing here writes to standard output: the runner reports progress to a {@link
 * org.transferqueue.server.bench.BenchListener} and the reporters return text or write files.
 */
package org.transferqueue.server.bench;
