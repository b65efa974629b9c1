/**
 * The low-level core of measuring, with the metric names and labels of the upstream Prometheus
 * exporter (a compatibility contract with its Grafana dashboard): the meter descriptors, the
 * controller and storage request meters and their op types, latency histograms and the process
 * memory reading. It depends on nothing domain-specific (only on the root package's clock and error
 * handler), so any layer above it can be measured.
 *
 * <p>{@link org.transferqueue.metrics.MetricDescriptor} lists every meter with its Micrometer and
 * Prometheus names, kind and labels. The collectors that read controller and storage statistics
 * into gauges, and the metered view of a storage manager, are wiring and live in {@code
 * org.transferqueue.system} ({@code SystemMetrics}, {@code MetricsCollector}). Measuring never
 * changes what a request does: every failure of a meter goes to a {@link
 * org.transferqueue.ErrorHandler} and the request goes on. The Prometheus endpoint itself lives in
 * {@code tq-server}; this package only needs a {@code MeterRegistry}.
 */
package org.transferqueue.metrics;
