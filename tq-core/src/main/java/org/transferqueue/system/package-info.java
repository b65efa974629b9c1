/**
 * System wiring below the public client API: the mapping of the YAML configuration ({@link
 * org.transferqueue.config.TqConfig} and its sections) onto one settings record per component, and
 * the in-process adapters that connect components without a socket ({@link
 * org.transferqueue.system.ControllerNotifier}).
 *
 * <p>This is the only layer that reads the YAML section records besides {@code client} and the
 * server roles: the components ({@code controller}, {@code storage}, {@code objectstore}, {@code
 * transport}) receive their own typed records and never see the YAML schema.
 */
package org.transferqueue.system;
