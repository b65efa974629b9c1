package org.transferqueue.metrics;

/**
 * A storage unit's request statistics of one request type (the {@code op_stats} of the unit's
 * metrics reply).
 *
 * @param requestCount requests so far
 * @param latencyAvgSeconds mean latency
 * @param latencyP50Seconds median latency, interpolated in the histogram buckets
 * @param latencyP99Seconds 99th percentile latency, interpolated in the histogram buckets
 */
public record StorageOpStats(
    long requestCount,
    double latencyAvgSeconds,
    double latencyP50Seconds,
    double latencyP99Seconds) {}
