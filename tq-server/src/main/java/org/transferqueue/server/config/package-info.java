/**
 * Reading the YAML configuration file into a validated {@link org.transferqueue.config.TqConfig}:
 * {@link org.transferqueue.server.config.TqConfigs} is the entry point.
 *
 * <p>The file uses the upstream keys ({@code backend.SimpleStorage.num_data_storage_units}); every
 * key, its default and its meaning are in {@code config/tq.yaml} at the repository root. Unknown
 * keys, values of the wrong type and values out of range fail at start with the full key path and
 * the value named. Precedence: defaults, then the file, then environment variables.
 */
package org.transferqueue.server.config;
