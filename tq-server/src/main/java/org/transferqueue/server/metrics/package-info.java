/**
 * The Prometheus endpoint of a running system: {@link
 * org.transferqueue.server.metrics.PrometheusEndpoint} serves the Micrometer meters of {@code
 * org.transferqueue.metrics} as Prometheus text at {@code /metrics}, with the metric names of the
 * upstream exporter so that its Grafana dashboard ({@code dashboards/grafana/transferqueue.json})
 * works unchanged.
 */
package org.transferqueue.server.metrics;
