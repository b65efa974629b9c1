/**
 * The controller service over the transport (message types 100-199): its protocol table ({@link
 * org.transferqueue.remote.controller.ControllerProtocol}, one typed entry per operation of {@link
 * org.transferqueue.controller.ControllerApi} with the codec of its request and of its reply), the
 * client proxy built from it ({@link org.transferqueue.remote.controller.RemoteController}) and the
 * server adapter that binds one handler to each entry ({@link
 * org.transferqueue.remote.controller.ControllerServer}). Requests and replies are msgpack metadata
 * only; the controller never sees tensor bytes.
 */
package org.transferqueue.remote.controller;
