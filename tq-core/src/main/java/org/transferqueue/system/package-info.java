/**
 * System wiring below the public client API: the mapping of the YAML configuration ({@link
 * org.transferqueue.config.TqConfig} and its sections) onto one settings record per component, the
 * in-process adapters that connect components without a socket ({@link
 * org.transferqueue.system.ControllerNotifier}), and the metric collectors that read controller and
 * storage statistics on top of the low-level meters of {@code org.transferqueue.metrics}: {@link
 * org.transferqueue.system.SystemMetrics} ties them together, {@link
 * org.transferqueue.system.MetricsCollector#collectNow()} refreshes the gauges on demand and {@link
 * org.transferqueue.system.MeteredStorageManager} measures a storage manager's requests per unit.
 *
 * <p>This is the only layer that reads the YAML section records besides {@code client} and the
 * server roles: the components ({@code controller}, {@code storage}, {@code objectstore}, {@code
 * transport}) receive their own typed records and never see the YAML schema.
 */
package org.transferqueue.system;
