"""Checkpoints of a running deployment in the format of docs/CHECKPOINT.md.

The Java command ``tq checkpoint save|load`` (from the server jar this package carries) writes and
reads the checkpoint: the controller state and every storage unit's or store node's file, with the
MANIFEST and its checksums, so a checkpoint saved from Python loads from Java and the reverse. Every
storage unit or store node writes its own file on its host, so the directory must be the same path
for this process and every server (one host, or a shared filesystem), as upstream requires.
The caller's ``metadata`` is saved in the MANIFEST (``tq checkpoint save --metadata``), so the load
of a checkpoint returns it whichever client saved it; upstream's ``metadata.json`` (``storage_saved``
and the metadata) is also written next to it for tools that read upstream's layout.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import yaml

from .errors import ClosedError, TQError

METADATA_FILE = "metadata.json"


def _config_file(deployment, directory: str) -> str:
    """A configuration file naming the deployment's servers (the token goes by environment)."""
    d = deployment
    conf = {
        "backend": {"storage_backend": d.storage_backend,
                    "SimpleStorage": {"num_data_storage_units": max(1, len(d.storage_unit_addresses))}},
        "network": {"controller_address": d.controller_address,
                    "storage_unit_addresses": list(d.storage_unit_addresses),
                    "store_node_addresses": list(d.store_node_addresses),
                    "max_frame_bytes": int(d.max_frame_bytes)},
        "client": {"request_timeout": f"{d.request_timeout}s"},
    }
    path = os.path.join(directory, "tq.yaml")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(conf, f)
    return path


def _run(deployment, *args: str) -> dict:
    from .launcher import find_java, jar_path
    with tempfile.TemporaryDirectory(prefix="tq-python-ckpt-") as tmp:
        conf = _config_file(deployment, tmp)
        env = dict(os.environ)
        if deployment.auth_token:
            env["TQ_AUTH_TOKEN"] = deployment.auth_token
        cmd = [find_java(), "--enable-native-access=ALL-UNNAMED", "-XX:-UsePerfData", "-XX:TieredStopAtLevel=1",
               "-jar", str(jar_path()), "checkpoint", *args, "--config", conf, "--json"]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL,
                              timeout=max(60.0, 4 * deployment.storage_timeout))
    if done.returncode != 0:
        line = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise _error_of(line)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _error_of(line: str) -> TQError:
    """The error of a failed command's last line (``tq checkpoint save: error: MESSAGE``)."""
    from .errors import StorageError
    return StorageError("checkpoint: " + line.split(": error: ", 1)[-1])


def save(client, checkpoint_dir, include_storage: bool = True, metadata: dict[str, Any] | None = None) -> None:
    """Saves the controller state and the stored data into ``checkpoint_dir`` (replacing one there)."""
    if client is None or client._closed:
        raise ClosedError("TransferQueue is not initialised: call transferqueue_jvm.init() first")
    path = Path(checkpoint_dir).absolute()
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise ValueError(f"metadata must be a dict, got {type(metadata).__name__}")
        json.dumps(metadata)  # refuses what metadata.json cannot hold, before anything is written
    path.parent.mkdir(parents=True, exist_ok=True)
    args = ["save", "--dir", str(path)]
    if not include_storage:
        args.append("--no-storage")
    if metadata:
        args += ["--metadata", json.dumps(metadata)]
    result = _run(client.deployment, *args)
    with open(path / METADATA_FILE, "w", encoding="utf-8") as f:
        json.dump({"storage_saved": bool(result.get("storage_saved", True)),
                   "include_storage_requested": bool(include_storage),
                   "user_metadata": result.get("metadata") or {}}, f, indent=2)


def load(client, checkpoint_dir) -> dict[str, Any]:
    """Replaces the deployment's state by the checkpoint; returns the metadata saved with it."""
    if client is None or client._closed:
        raise ClosedError("TransferQueue is not initialised: call transferqueue_jvm.init() first")
    path = Path(checkpoint_dir).absolute()
    if not path.is_dir():
        raise FileNotFoundError(f"Checkpoint directory not found: {path}")
    result = _run(client.deployment, "load", "--dir", str(path))
    return dict(result.get("metadata") or {})
