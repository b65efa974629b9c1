package org.transferqueue.server.metrics;

import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.config.NamingConvention;
import io.micrometer.prometheusmetrics.PrometheusNamingConvention;

/**
 * Prometheus's naming convention, except that gauges whose name ends in {@code _total} keep that
 * suffix. The upstream exporter publishes gauges such as {@code tq_partitions_total}; the standard
 * convention would strip the suffix (it is reserved for counters in OpenMetrics) and break the
 * dashboard's queries. Stateless and thread-safe.
 */
final class TqPrometheusNaming implements NamingConvention {
  private static final String TOTAL = "_total";

  private final NamingConvention standard = new PrometheusNamingConvention();

  @Override
  public String name(String name, Meter.Type type, String baseUnit) {
    if (type == Meter.Type.GAUGE) {
      String snake = NamingConvention.snakeCase.name(name, type, baseUnit);
      if (snake.endsWith(TOTAL) && snake.matches("[a-zA-Z_:][a-zA-Z0-9_:]*")) {
        return snake;
      }
    }
    return standard.name(name, type, baseUnit);
  }

  @Override
  public String tagKey(String key) {
    return standard.tagKey(key);
  }

  @Override
  public String tagValue(String value) {
    return standard.tagValue(value);
  }
}
