package org.transferqueue.client;

import org.transferqueue.config.TqConfig;
import org.transferqueue.controller.ControllerConfig;

/** Maps the user configuration onto the controller's settings. */
final class ControllerSettings {
  private ControllerSettings() {}

  static ControllerConfig from(TqConfig config) {
    var controller = config.controller();
    return ControllerConfig.builder()
        .preAllocSampleNum(controller.preallocSampleNum())
        .pollingMode(controller.pollingMode())
        .fetchTimeout(controller.getMetadataTimeout())
        .build();
  }
}
