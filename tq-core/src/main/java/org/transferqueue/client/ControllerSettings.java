package org.transferqueue.client;

import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.ControllerOptions;

/**
 * Maps the user configuration onto the controller's settings, for every process that runs a
 * controller (the embedded system, the {@code tq controller} role). Stateless.
 */
public final class ControllerSettings {
  private ControllerSettings() {}

  /**
   * The controller settings of a configuration's {@code controller} section.
   *
   * @param config the validated configuration
   * @return pre-allocation, polling mode, blocking-fetch timeout and re-check interval
   */
  public static ControllerOptions from(TqConfig config) {
    var controller = config.controller();
    return ControllerOptions.builder()
        .preAllocSampleNum(controller.preallocSampleNum())
        .pollingMode(controller.pollingMode())
        .fetchTimeout(controller.getMetadataTimeout())
        .checkInterval(controller.getMetadataCheckInterval())
        .build();
  }
}
