"""Configuration: upstream's keys (a dict, a ``DictConfig`` or a ``tq.yaml`` path) plus the Java
servers' ``network`` section and ``TQ_*`` environment variables.

Precedence, lowest first: the defaults (``defaults.yaml``, a copy of the repository's
``config/tq.yaml`` that a test keeps identical), the ``conf`` argument, the environment variables
named in the defaults' comments (``env: TQ_...``). Unknown keys are an error naming the key path,
as in the Java loader. The section ``python`` holds this client's own options and is not passed to
the servers:

``python.always_nested`` (false)
    return tensor fields as upstream does (nested jagged tensors) instead of the kind put.
``python.strict_missing_keys`` (false)
    ``kv_batch_get`` fails with ``UnknownKeyError`` for missing keys instead of dropping them with
    a warning (upstream's behaviour).
``python.connections_per_peer`` (2), ``python.java_options`` ("-Xmx1g"), ``python.start_timeout`` (60 s),
``python.store_nodes`` (2) and ``python.store_node_bytes`` (512 MiB): the local system's store nodes.
``python.reuse_freed_memory`` (false)
    keep the memory of freed tensors mapped for the next ones (glibc's mmap and trim thresholds,
    see ``memory``): gets of large columns then receive into reused pages instead of fresh ones,
    at the price of a resident size that stays at its peak. Process-wide.
``python.shared_memory_views`` (false)
    let a get through shared memory return a column as a view of the server's memory when its rows
    lie there back to back (no copy at all). Such a tensor is the stored cell or object itself:
    treat it as read-only, since an in-place write would change what every later reader gets. Off,
    every result is the caller's own memory (one copy). Process-wide.
``python.placement`` ("auto")
    where ``init()`` without addresses starts the roles: ``auto`` places them as Ray actors when Ray
    is connected in this process (``ray.is_initialized()``), else as child processes; ``ray`` always
    on Ray (connecting with ``ray.init()`` when needed); ``local`` always as child processes.
``python.ray``
    Ray placement (see ``ray_placement``): ``namespace`` ("transferqueue_jvm") and ``registry_name``
    ("TransferQueueJvm") of the named detached actor other processes attach through;
    ``controller_options`` and ``storage_options`` (``num_cpus``, ``num_gpus``, ``memory``,
    ``resources``) of each role actor; ``storage_strategy`` ("SPREAD") of the storage placement
    group; ``bind_host`` (null: the node IP address Ray reports; ``0.0.0.0``: every interface);
    ``attach_timeout`` (60 s) an attaching ``init()`` waits for a system being started.
"""

from __future__ import annotations

import copy
import os
import re
from importlib import resources
from typing import Any

import yaml

from .errors import InvalidConfigurationError

PYTHON_DEFAULTS = {"always_nested": False, "strict_missing_keys": False, "connections_per_peer": 2,
                   "java_options": "-Xmx1g", "start_timeout": "60s",
                   "store_nodes": 2, "store_node_bytes": 512 << 20, "placement": "auto",
                   "reuse_freed_memory": False, "shared_memory_views": False,
                   "ray": {"namespace": "transferqueue_jvm", "registry_name": "TransferQueueJvm",
                           "controller_options": {"num_cpus": 1, "num_gpus": 0, "memory": None, "resources": {}},
                           "storage_options": {"num_cpus": 1, "num_gpus": 0, "memory": None, "resources": {}},
                           "storage_strategy": "SPREAD", "bind_host": None, "attach_timeout": "60s"}}

_ENV_ALIASES = {"TQ_STORAGE_NODE_ADDRESSES": ("network", "store_node_addresses")}
_LIST_KEYS = {("network", "storage_unit_addresses"), ("network", "store_node_addresses")}
# Keys taken whole, not checked key by key: the sampler (a name or an object) and maps of user-chosen names.
_OPEN_KEYS = {("controller", "sampler"), ("controller", "sampler_args"), ("backend", "Yuanrong", "ucx_env_vars"),
              ("python", "ray", "controller_options", "resources"), ("python", "ray", "storage_options", "resources")}


def _defaults_text() -> str:
    return resources.files(__package__).joinpath("defaults.yaml").read_text(encoding="utf-8")


def defaults() -> dict[str, Any]:
    """The defaults of every key (config/tq.yaml) plus the ``python`` section."""
    base = yaml.safe_load(_defaults_text()) or {}
    base["python"] = copy.deepcopy(PYTHON_DEFAULTS)
    return base


def env_names() -> dict[str, tuple[str, ...]]:
    """Environment variable -> key path, read from the ``(env: TQ_...)`` comments of the defaults."""
    out: dict[str, tuple[str, ...]] = {}
    stack: list[tuple[int, str]] = []
    for line in _defaults_text().splitlines():
        m = re.match(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*):", line)
        if not m or line.lstrip().startswith("#"):
            continue
        indent, key = len(m.group(1)), m.group(2)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = tuple(k for _, k in stack) + (key,)
        stack.append((indent, key))
        env = re.search(r"env: (TQ_[A-Z0-9_]+)", line)
        if env:
            out[env.group(1)] = path
    out.update(_ENV_ALIASES)
    return out


def _to_plain(conf):
    try:
        from omegaconf import DictConfig, OmegaConf  # optional: upstream users pass DictConfig
        if isinstance(conf, DictConfig):
            return OmegaConf.to_container(conf, resolve=True)
    except ImportError:
        pass
    return conf


def _merge(base: dict, over: dict, path: tuple[str, ...] = ()):
    for key, value in over.items():
        here = path + (str(key),)
        if key not in base:
            if len(path) >= 1 and path[0] == "backend" and len(path) == 1 and isinstance(value, dict):
                raise InvalidConfigurationError(f"{'.'.join(here)}: unknown storage backend section "
                                                "(SimpleStorage, MooncakeStore)")
            raise InvalidConfigurationError(f"{'.'.join(here)}: unknown configuration key")
        if here in _OPEN_KEYS:
            base[key] = value
        elif isinstance(base[key], dict):
            if value is None:
                continue
            if not isinstance(value, dict):
                raise InvalidConfigurationError(f"{'.'.join(here)}: {value!r} is not a section")
            _merge(base[key], value, here)
        else:
            base[key] = value


def load(conf=None, environ: dict[str, str] | None = None) -> dict[str, Any]:
    """The merged configuration (a fresh dict)."""
    environ = os.environ if environ is None else environ
    merged = defaults()
    conf = _to_plain(conf)
    if isinstance(conf, (str, os.PathLike)):
        try:
            with open(conf, encoding="utf-8") as f:
                conf = yaml.safe_load(f) or {}
        except OSError as e:
            raise InvalidConfigurationError(f"cannot read configuration file {conf}: {e}") from None
        except yaml.YAMLError as e:
            raise InvalidConfigurationError(f"configuration file {conf} is not valid YAML: {e}") from None
    if conf is not None:
        if not isinstance(conf, dict):
            raise InvalidConfigurationError(f"conf must be a dict, a DictConfig or a path, got {type(conf).__name__}")
        _merge(merged, copy.deepcopy(conf))
    for name, path in env_names().items():
        if name in environ and environ[name] != "":
            value: Any = environ[name]
            if tuple(path) in _LIST_KEYS:
                value = [v.strip() for v in value.split(",") if v.strip()]
            node = merged
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = value
    return merged


_UNITS = {"ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "": 1.0}


def seconds(value, key: str) -> float:
    """A duration (``1s``, ``500ms``, ``2m``, a number of seconds) in seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*(ms|s|m|h|)\s*", str(value))
    if not m:
        raise InvalidConfigurationError(f"{key}: {value!r} is not a duration (e.g. 30s, 500ms)")
    return float(m.group(1)) * _UNITS[m.group(2)]


def has_addresses(conf: dict) -> bool:
    """Whether the configuration names servers to connect to (else a local system is started)."""
    return bool(conf["network"].get("controller_address"))


def server_config(conf: dict) -> dict:
    """The configuration without this client's own section, for the Java servers."""
    out = copy.deepcopy(conf)
    out.pop("python", None)
    sampler = out.get("controller", {}).get("sampler")
    if sampler is not None and not isinstance(sampler, str):
        raise InvalidConfigurationError(
            "controller.sampler: Python sampler objects cannot run in the Java controller; name a built-in "
            "(SequentialSampler, GRPOGroupNSampler, RankAwareSampler, SeqlenBalancedSampler) or a Java class")
    return out
