"""Running on Ray: the Java roles placed as Ray actors, found by any process of the job by name.

``init(conf)`` in a process connected to Ray (``ray.is_initialized()``, or ``python.placement: ray``)
and with no addresses configured starts:

* a *registry*: a named, detached actor (name ``python.ray.registry_name``, default
  ``TransferQueueJvm``, in the Ray namespace ``python.ray.namespace``, default ``transferqueue_jvm``)
  that holds the roles' addresses, the access token and the merged configuration;
* one *controller* actor and ``backend.SimpleStorage.num_data_storage_units`` *storage unit* actors
  (or ``python.store_nodes`` *store node* actors for ``MooncakeStore``); the storage actors are
  placed in one placement group with strategy ``python.ray.storage_strategy`` (``SPREAD``), each
  actor with the resources of ``python.ray.controller_options`` / ``storage_options``.

Each role actor starts its Java role (``tq controller|storage-unit|store-node``) on its own node from
the jar this package carries, bound to the node IP address Ray reports (``python.ray.bind_host``
overrides it), and reports the address the role printed. Every role requires a random token that
``init()`` generates; it reaches the roles through their environment and the clients through the
registry, and is never printed or logged.

Any other process of the job (a worker actor, a task, another driver in the namespace) calling
``init()`` attaches to the registry and gets the stored configuration: clients then talk to the
storage roles directly; no data goes through Ray's object store or the controller.

Lifecycle: ``close()`` in the creating process stops every role and actor. A Java role that exits
makes its actor log an error and report it in :func:`health`; clients of that role get typed errors
(``ConnectionFailed``, ``DeadlineExceeded``) by their deadlines. A role actor that dies takes its
Java process with it (the role watches its parent process). The role actors belong to the creating
process: when it ends (``ray.shutdown()``, a crash), Ray ends them, and the registry, which watches
the controller actor, removes itself.
"""

from __future__ import annotations

import copy
import logging
import os
import secrets
import threading
import time
from typing import Any

import ray
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from . import config as configs
from . import launcher
from .errors import (ConnectionFailed, DeadlineExceeded, IllegalStateError, InvalidConfigurationError, TQError)

logger = logging.getLogger(__name__)

_OPTION_KEYS = ("num_cpus", "num_gpus", "memory", "resources")
_WILDCARDS = ("0.0.0.0", "::")
# How often the registry checks that the controller actor is alive.
_WATCH_INTERVAL = 2.0
_STOP_TIMEOUT = 20.0


# ------------------------------------------------------------------------------------------ actors

class _RoleActor:
    """One Java role on the node Ray placed this actor on."""

    def __init__(self, kind: str, index: int, bind_host: str | None):
        self.kind, self.index = kind, index
        self.name = kind if kind == "controller" else f"{kind} {index}"
        self.node_ip = ray.util.get_node_ip_address()
        self.bind_host = bind_host or self.node_ip
        probe = self.node_ip if self.bind_host in _WILDCARDS else self.bind_host
        self.port = launcher._free_ports(1, probe)[0]
        self.system: launcher.LocalSystem | None = None
        self.stopping = False

    def where(self) -> dict:
        """The node and the address the role will serve at."""
        return {"role": self.name, "node_id": ray.get_runtime_context().get_node_id(), "node_ip": self.node_ip,
                "address": f"{self.node_ip}:{self.port}", "actor_pid": os.getpid()}

    def start(self, server_conf: dict, token: str, python_conf: dict) -> dict:
        """Starts the Java role with ``server_conf`` (every role's address set) and the token."""
        conf = copy.deepcopy(server_conf)
        conf["network"]["bind_host"] = self.bind_host
        conf["network"]["auth_token"] = None  # the token goes through the environment, not a file
        env = launcher.role_environment()
        env["TQ_AUTH_TOKEN"] = token
        self.system = launcher.LocalSystem({"python": python_conf})
        self.system.launch(conf, [(self.name, launcher.role_arguments(self.kind, self.index))], env)
        role = self.system.roles[0]
        host, port = role.address.rsplit(":", 1)
        address = f"{self.node_ip}:{port}" if host in _WILDCARDS else role.address
        threading.Thread(target=self._watch, args=(role,), name=f"tq-{self.name}-watch", daemon=True).start()
        return {"role": self.name, "address": address, "java_pid": role.proc.pid}

    def _watch(self, role) -> None:
        code = role.proc.wait()
        if not self.stopping:
            logger.error("TransferQueue %s (pid %d) exited with status %s; its last output:\n%s",
                         self.name, role.proc.pid, code, "\n".join(list(role.lines)[-20:]))

    def status(self) -> dict:
        """``alive`` (the Java role runs), ``exit_code`` (None while it runs) and its last output."""
        role = self.system.roles[0] if self.system and self.system.roles else None
        code = None if role is None else role.proc.poll()
        alive = role is not None and code is None
        return {"role": self.name, "alive": alive, "exit_code": code,
                "java_pid": None if role is None else role.proc.pid,
                "output": [] if role is None or alive else list(role.lines)[-20:]}

    def stop(self) -> None:
        """Stops the Java role (SIGTERM, SIGKILL after 10 s)."""
        self.stopping = True
        if self.system is not None:
            self.system.stop()


class _Registry:
    """The named detached actor: addresses, token and merged configuration of one system."""

    def __init__(self):
        self._cond = threading.Condition()
        self._state = "starting"
        self._conf: dict | None = None
        self._error: str | None = None
        self._roles: list = []
        threading.Thread(target=self._watch, name="tq-registry-watch", daemon=True).start()

    def adopt(self, roles: list) -> None:
        """The role actors (controller first), watched from now on."""
        with self._cond:
            self._roles = list(roles)

    def publish(self, conf: dict) -> None:
        with self._cond:
            self._state, self._conf = "ready", conf
            self._cond.notify_all()

    def fail(self, message: str) -> None:
        with self._cond:
            self._state, self._error = "failed", message
            self._cond.notify_all()

    def wait_ready(self, timeout: float) -> tuple[str, Any]:
        """``("ready", conf)``, ``("failed", message)`` or ``("starting", None)`` after ``timeout``."""
        with self._cond:
            self._cond.wait_for(lambda: self._state != "starting", timeout)
            return self._state, self._conf if self._state == "ready" else self._error

    def health(self) -> list[dict]:
        """Every role's status; a role actor that cannot be reached is reported as not alive."""
        with self._cond:
            roles = list(self._roles)
        out = []
        for handle in roles:
            try:
                out.append(ray.get(handle.status.remote(), timeout=10))
            except Exception as e:  # a dead or unreachable actor is reported, not raised
                out.append({"role": None, "alive": False, "exit_code": None, "java_pid": None,
                            "output": [f"role actor unreachable: {type(e).__name__}"]})
        return out

    def _watch(self) -> None:
        while True:
            time.sleep(_WATCH_INTERVAL)
            with self._cond:
                controller = self._roles[0] if self._roles else None
            if controller is None:
                continue
            try:
                ray.get(controller.status.remote(), timeout=30)
            except ray.exceptions.GetTimeoutError:
                continue  # busy, not gone
            except ray.exceptions.RayActorError:
                # The process that created the system ended (or its controller actor died):
                # nothing is left to describe.
                ray.kill(ray.get_runtime_context().current_actor, no_restart=True)
                return


# ------------------------------------------------------------------------------- placement

def _actor_options(options: dict, key: str) -> dict:
    unknown = [k for k in options if k not in _OPTION_KEYS]
    if unknown:
        raise InvalidConfigurationError(f"{key}: unknown option(s) {unknown} ({', '.join(_OPTION_KEYS)})")
    out: dict[str, Any] = {}
    for k in ("num_cpus", "num_gpus", "memory"):
        v = options.get(k)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise InvalidConfigurationError(f"{key}.{k}: {v!r} is not a number >= 0")
        out[k] = v
    resources = options.get("resources") or {}
    if not isinstance(resources, dict) or any(not isinstance(v, (int, float)) or v < 0 for v in resources.values()):
        raise InvalidConfigurationError(f"{key}.resources: {resources!r} is not a map of resource name to amount >= 0")
    if resources:
        out["resources"] = dict(resources)
    return out


def _bundle(options: dict, key: str) -> dict[str, float]:
    bundle = {"CPU": options.get("num_cpus", 0), "GPU": options.get("num_gpus", 0),
              "memory": options.get("memory", 0), **options.get("resources", {})}
    bundle = {k: float(v) for k, v in bundle.items() if v}
    if not bundle:
        raise InvalidConfigurationError(f"{key}: a placement-group bundle needs a resource > 0 "
                                        "(num_cpus, num_gpus, memory or resources)")
    return bundle


def _unwrap(e: BaseException) -> BaseException:
    cause = getattr(e, "cause", None)
    return cause if isinstance(cause, BaseException) else e


class RaySystem:
    """The role actors one ``init()`` started; :meth:`stop` ends them, their Java roles and the registry."""

    def __init__(self, conf: dict, registry):
        self.conf = conf
        self.registry = registry
        self.controller = None
        self.storage: list = []
        self.pg = None
        self.placement: list[dict] = []
        self.job_id = ray.get_runtime_context().get_job_id()
        self._stopped = False

    @property
    def actors(self) -> list:
        """The role actors, controller first."""
        return ([self.controller] if self.controller is not None else []) + list(self.storage)

    def start(self) -> dict:
        """Places and starts the roles; returns the merged configuration clients use (with the token)."""
        py = self.conf["python"]
        rc = py["ray"]
        timeout = configs.seconds(py.get("start_timeout", "60s"), "python.start_timeout")
        deadline = time.monotonic() + timeout
        ctrl_opts = _actor_options(rc.get("controller_options") or {}, "python.ray.controller_options")
        unit_opts = _actor_options(rc.get("storage_options") or {}, "python.ray.storage_options")
        strategy = rc.get("storage_strategy") or "SPREAD"
        if strategy not in ("SPREAD", "STRICT_SPREAD", "PACK", "STRICT_PACK"):
            raise InvalidConfigurationError(f"python.ray.storage_strategy: {strategy!r} "
                                            "(SPREAD, STRICT_SPREAD, PACK, STRICT_PACK)")
        bind_host = rc.get("bind_host")
        kind, count = launcher.storage_roles(self.conf)
        actor_class = ray.remote(_RoleActor)
        self.controller = actor_class.options(max_concurrency=4, **ctrl_opts).remote("controller", 0, bind_host)
        if count:
            bundle = _bundle(unit_opts, "python.ray.storage_options")
            self.pg = placement_group([dict(bundle) for _ in range(count)], strategy=strategy)
            try:
                ray.get(self.pg.ready(), timeout=max(0.1, deadline - time.monotonic()))
            except ray.exceptions.GetTimeoutError:
                raise DeadlineExceeded(f"the cluster did not grant {count} x {bundle} ({strategy}) for the {kind} "
                                       f"actors within python.start_timeout={timeout:g}s; add nodes or lower "
                                       "python.ray.storage_options") from None
            self.storage = [actor_class.options(
                max_concurrency=4, scheduling_strategy=PlacementGroupSchedulingStrategy(
                    placement_group=self.pg, placement_group_bundle_index=i), **unit_opts).remote(kind, i, bind_host)
                for i in range(count)]
        self.placement = self._get([a.where.remote() for a in self.actors], deadline, "placing the roles")
        logger.debug("roles placed after %.1fs: %s", timeout - (deadline - time.monotonic()), self.placement)
        # The registry's methods run concurrently: one adopt() call, with every role.
        self._get([self.registry.adopt.remote(self.actors)], deadline, "registering the roles")
        server_conf = configs.server_config(self.conf)
        net = server_conf["network"]
        launcher.set_addresses(net, self.placement[0]["address"], [p["address"] for p in self.placement[1:]], kind)
        token = secrets.token_urlsafe(32)
        started = self._get([a.start.remote(server_conf, token, py) for a in self.actors], deadline,
                            "starting the Java roles", grace=10.0)
        logger.debug("roles started after %.1fs", timeout - (deadline - time.monotonic()))
        for where, role in zip(self.placement, started):
            where.update(role)
        merged = copy.deepcopy(self.conf)
        launcher.set_addresses(merged["network"], started[0]["address"], [r["address"] for r in started[1:]], kind)
        merged["network"]["auth_token"] = token
        return merged

    @staticmethod
    def _get(refs: list, deadline: float, what: str, grace: float = 0.0) -> list:
        # grace: a role that does not come up fails inside its actor at python.start_timeout, with
        # its output; this side waits a little longer to receive that error rather than a bare timeout.
        try:
            return ray.get(refs, timeout=max(0.1, deadline - time.monotonic()) + grace)
        except ray.exceptions.GetTimeoutError:
            raise DeadlineExceeded(f"{what} on Ray did not finish within python.start_timeout; an actor still "
                                   "pending lacks the resources of python.ray.controller_options or "
                                   f"storage_options (cluster: {ray.available_resources()})") from None
        except ray.exceptions.RayError as e:
            cause = _unwrap(e)
            if isinstance(cause, TQError):
                raise type(cause)(f"{what} on Ray: {cause.message}") from None
            raise IllegalStateError(f"{what} on Ray failed: {cause}") from None

    def stop(self) -> None:
        """Stops every Java role, kills the role actors, removes the placement group and the registry;
        idempotent. After ``ray.shutdown()`` (even if connected again since) Ray has ended the actors with
        the job that owned them and nothing is left to do."""
        if self._stopped:
            return
        self._stopped = True
        if not ray.is_initialized() or ray.get_runtime_context().get_job_id() != self.job_id:
            return  # the job that owned the actors ended: Ray ended them, their roles and the registry
        actors = self.actors
        # Waits for every stop, failed ones included (a dead actor took its Java role with it).
        if actors:
            ray.wait([a.stop.remote() for a in actors], num_returns=len(actors), timeout=_STOP_TIMEOUT)
        for handle in actors + [self.registry]:
            try:
                ray.kill(handle, no_restart=True)
            except Exception as e:  # already gone
                logger.debug("ray.kill: %s", type(e).__name__)
        if self.pg is not None:
            try:
                remove_placement_group(self.pg)
            except Exception as e:  # removed with its job already
                logger.debug("remove_placement_group: %s", type(e).__name__)
        rc = self.conf["python"]["ray"]
        # The name is free once the registry is dead: the next init() may create a new system.
        deadline = time.monotonic() + _STOP_TIMEOUT
        while time.monotonic() < deadline:
            try:
                ray.get_actor(rc["registry_name"], namespace=rc["namespace"])
            except ValueError:
                return
            time.sleep(0.05)
        logger.warning("the registry actor %s/%s was still registered %gs after close()", rc["namespace"],
                       rc["registry_name"], _STOP_TIMEOUT)


# ------------------------------------------------------------------------------ init / attach

def _registry(rc: dict):
    try:
        return ray.get_actor(rc["registry_name"], namespace=rc["namespace"])
    except ValueError:
        return None


def acquire(conf: dict) -> tuple[RaySystem | None, dict]:
    """Attaches to the system registered in the namespace, or starts one; returns ``(system, conf)``
    with ``system`` None when attached (the creator owns it) and ``conf`` the system's merged
    configuration, token included."""
    if not ray.is_initialized():
        ray.init()  # python.placement: ray; RAY_ADDRESS names the cluster, else a local one starts
    rc = conf["python"]["ray"]
    timeout = configs.seconds(rc.get("attach_timeout", "60s"), "python.ray.attach_timeout")
    for _ in range(3):
        registry = _registry(rc)
        if registry is None:
            try:
                registry = ray.remote(_Registry).options(
                    name=rc["registry_name"], namespace=rc["namespace"], lifetime="detached", num_cpus=0,
                    max_concurrency=16).remote()
            except ValueError:
                continue  # another process registered first: attach to it
            system = RaySystem(conf, registry)
            try:
                merged = system.start()
            except BaseException as e:
                try:
                    registry.fail.remote(f"{type(e).__name__}: {e}")
                finally:
                    system.stop()
                raise
            ray.get(registry.publish.remote(merged), timeout=30)
            return system, merged
        try:
            state, value = ray.get(registry.wait_ready.remote(timeout), timeout=timeout + 30)
        except ray.exceptions.RayActorError:
            continue  # stopped meanwhile: start a new one
        if state == "ready":
            return None, value
        if state == "failed":
            raise IllegalStateError(f"the TransferQueue system registered as {rc['namespace']}/"
                                    f"{rc['registry_name']} failed to start: {value}")
        raise DeadlineExceeded(f"the TransferQueue system registered as {rc['namespace']}/{rc['registry_name']} "
                               f"was not ready within python.ray.attach_timeout={timeout:g}s")
    raise ConnectionFailed(f"could not attach to {rc['namespace']}/{rc['registry_name']}: it was stopped while "
                           "attaching, three times")


def health(conf: dict | None = None) -> list[dict]:
    """The status of every role of the system registered in the namespace (``python.ray`` of ``conf``,
    default keys if None): one dict per role with ``role``, ``alive``, ``exit_code``, ``java_pid`` and,
    for a role that exited, its last ``output`` lines."""
    rc = configs.load(conf if conf is not None else {})["python"]["ray"]
    registry = _registry(rc)
    if registry is None:
        raise IllegalStateError(f"no TransferQueue system is registered as {rc['namespace']}/{rc['registry_name']}")
    return ray.get(registry.health.remote(), timeout=60)
