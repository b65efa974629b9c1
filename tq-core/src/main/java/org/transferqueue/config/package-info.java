/**
 * Typed, validated configuration: one immutable record per section ({@link
 * org.transferqueue.config.TqConfig} and its parts), each with a builder whose {@code build()}
 * checks every value once and reports all problems together, naming the dotted key and the value
 * ({@link org.transferqueue.ErrorCode#INVALID_CONFIGURATION}).
 *
 * <p>Keys are the upstream YAML keys ({@code backend.SimpleStorage.num_data_storage_units}); each
 * record declares them as {@code FOO_PROP_NAME} / {@code FOO_DEFAULT} constant pairs. {@link
 * org.transferqueue.config.ConfigKey} lists every key with its type, so a file reader and the
 * environment overrides ({@link org.transferqueue.config.TqConfig.Builder#applyEnvironment}) set
 * values the same way. Precedence: defaults, then the file, then environment variables.
 *
 * <p>This package sits at the bottom of the layer list beside {@code memory} and {@code tensor}: it
 * depends only on the JDK and the error model. Components do not read the section records: {@code
 * org.transferqueue.system.ConfigMapper} maps them onto each component's own settings record. A
 * default that a section and a component record share is defined once, in {@link
 * org.transferqueue.config.Defaults}; that class and {@link org.transferqueue.config.HostPort} are
 * all a component may use from here ({@code ArchitectureTest} checks it).
 */
package org.transferqueue.config;
