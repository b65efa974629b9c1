/**
 * The performance harness behind {@code tq bench}: the key-value workload of the upstream perftest
 * (batch put, list, batch get and clear of one global batch per iteration), a runner over a matrix
 * of storage backends and deployment modes, the memory-copy baseline every figure is compared with,
 * and reporters (text table, JSON, CSV with the upstream columns, PNG chart).
 *
 * <p>Nothing here writes to standard output: the runner reports progress to a {@link
 * org.transferqueue.server.bench.BenchListener} and the reporters return text or write files.
 */
package org.transferqueue.server.bench;
