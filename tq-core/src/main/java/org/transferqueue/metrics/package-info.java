/**
 * Micrometer meters of a running system, with the metric names and labels of the upstream
 * Prometheus exporter (a compatibility contract with its Grafana dashboard): controller request
 * meters, controller gauges refreshed from the controller's statistics, storage unit gauges and
 * per-unit storage request meters.
 *
 * <p>{@link org.transferqueue.metrics.MetricDescriptor} lists every meter with its Micrometer and
 * Prometheus names, kind and labels. {@link org.transferqueue.metrics.SystemMetrics} ties them
 * together; {@link org.transferqueue.metrics.MetricsCollector#collectNow()} refreshes the gauges on
 * demand. Measuring never changes what a request does: every failure of a meter or of a collection
 * step goes to a {@link org.transferqueue.ErrorHandler} and the request goes on. The Prometheus
 * endpoint itself lives in {@code tq-server}; this package only needs a {@code MeterRegistry}.
 */
package org.transferqueue.metrics;
