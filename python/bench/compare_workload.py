"""The workload of upstream TransferQueue's perftest, for any client with upstream's key-value API.

Written from the behaviour of upstream's ``scripts/performance_test/perftest.py`` (no code taken):
one writer and one reader client; per iteration ``kv_batch_put`` (writer) -> ``kv_list`` (reader)
-> ``kv_batch_get`` of the listed keys (reader) -> ``kv_clear`` of those keys (writer), on
partition ``train_0``, keys ``test_key_0 ..``.

Data (:func:`make_batch`):

- **simple**: ``F`` float32 fields ``field_i`` of shape ``[B, S]`` (Gaussian, seeded).
- **complex**: ``ceil(F/3)`` such regular fields; as many jagged fields ``nested_field_i`` (as
  remain) whose row ``j`` is ``0, 1, .., len(j)-1`` with ``len(j) = round(1 + j (S-1)/(B-1))``;
  the rest are string fields ``nontensor_field_i`` of ``4 S`` characters per row.

:class:`ClientRole` is what runs in each client process (a Ray actor for upstream, a plain child
process for this project); it times each call around the API call alone, and the reader checks
what it got against a copy of the data it generates itself from the same seed.
"""

from __future__ import annotations

import cProfile
import importlib
import io
import math
import pstats
import time
from dataclasses import asdict, dataclass
from typing import Any

import torch

PARTITION = "train_0"

# name -> (batch, fields, seq_len); the same presets as `tq bench` (BenchSize).
PRESETS: dict[str, tuple[int, int, int]] = {
    "tiny": (128, 4, 1024),
    "small": (1024, 9, 8192),
    "medium": (4096, 15, 32768),
}


@dataclass(frozen=True)
class Case:
    """One data size and kind."""

    preset: str
    complex: bool
    batch: int
    fields: int
    seq_len: int
    seed: int = 42

    @staticmethod
    def of(preset: str, complex_: bool, seed: int = 42) -> "Case":
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r} (presets: {', '.join(PRESETS)})")
        b, f, s = PRESETS[preset]
        return Case(preset, complex_, b, f, s, seed)

    @property
    def name(self) -> str:
        return f"{self.preset} {'complex' if self.complex else 'simple'}"

    def field_counts(self) -> tuple[int, int, int]:
        """(regular, jagged, string) field counts."""
        if not self.complex:
            return self.fields, 0, 0
        regular = (self.fields + 2) // 3
        nested = min(regular, self.fields - regular)
        return regular, nested, self.fields - regular - nested

    def jagged_lengths(self) -> list[int]:
        b, s = self.batch, self.seq_len
        step = (s - 1) / (b - 1) if b > 1 else 0.0
        return [max(1, min(s, int(round(1 + j * step)))) for j in range(b)]

    def nbytes(self) -> int:
        """Bytes of one batch: tensor bytes plus the UTF-8 bytes of the strings."""
        regular, nested, strings = self.field_counts()
        per_regular = self.batch * self.seq_len * 4
        per_nested = sum(self.jagged_lengths()) * 4 if nested else 0
        per_string = self.batch * 4 * self.seq_len
        return regular * per_regular + nested * per_nested + strings * per_string

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["name"] = self.name
        d["bytes"] = self.nbytes()
        return d


def make_columns(case: Case) -> dict[str, tuple[str, Any]]:
    """The batch's columns, ``{name: (kind, data)}``; kind is ``dense``, ``jagged`` or ``strings``.

    Deterministic for a given case and seed: the reader builds the same columns to check a get.
    """
    regular, nested, strings = case.field_counts()
    cols: dict[str, tuple[str, Any]] = {}
    gen = torch.Generator().manual_seed(case.seed)
    for i in range(regular):
        cols[f"field_{i}"] = ("dense", torch.randn(case.batch, case.seq_len, dtype=torch.float32, generator=gen))
    if nested:
        lengths = case.jagged_lengths()
        base = torch.arange(case.seq_len, dtype=torch.float32)
        for i in range(nested):
            rows = [base[:n].clone() for n in lengths]
            cols[f"nested_field_{i}"] = ("jagged", rows)
    text = "x" * (4 * case.seq_len)
    for i in range(strings):
        cols[f"nontensor_field_{i}"] = ("strings", [text] * case.batch)
    return cols


def make_batch(case: Case):
    """The batch as upstream's perftest builds it: a TensorDict with nested jagged tensors and
    NonTensorStack string fields."""
    from tensordict import NonTensorStack, TensorDict

    td = TensorDict(batch_size=(case.batch,))
    for name, (kind, data) in make_columns(case).items():
        if kind == "dense":
            td.set(name, data)
        elif kind == "jagged":
            td.set(name, torch.nested.as_nested_tensor(data, layout=torch.jagged))
        else:
            td.set(name, NonTensorStack.from_list(data))
    return td


def keys_of(case: Case) -> list[str]:
    return [f"test_key_{i}" for i in range(case.batch)]


def _rows(value) -> list:
    """Rows of a returned field, whatever container it came in (a check, not the timed path)."""
    if isinstance(value, torch.Tensor):
        return list(value.unbind(0))
    if hasattr(value, "tolist"):
        return list(value.tolist())
    return list(value)


def verify(result, columns: dict[str, tuple[str, Any]], keys: list[str]) -> str | None:
    """None when ``result`` holds exactly the columns' rows named by ``keys``, else what differs."""
    try:
        index = [int(k.rsplit("_", 1)[1]) for k in keys]
    except (ValueError, IndexError):
        return f"unexpected keys listed: {keys[:4]}..."
    for name, (kind, expected) in columns.items():
        if name not in result.keys():
            return f"field {name} missing from the get (got {sorted(result.keys())})"
        got = result[name]
        if kind == "dense" and isinstance(got, torch.Tensor) and not got.is_nested:
            want = expected[torch.tensor(index)]
            if got.shape != want.shape or got.dtype != want.dtype or not torch.equal(got, want):
                return f"field {name}: values differ (shape {tuple(got.shape)}, want {tuple(want.shape)})"
            continue
        rows = _rows(got)
        if len(rows) != len(index):
            return f"field {name}: {len(rows)} rows, want {len(index)}"
        for r, i in enumerate(index):
            want = expected[i]
            row = rows[r]
            if kind == "strings":
                if row != want:
                    return f"field {name} row {r}: string differs"
            else:
                if not isinstance(row, torch.Tensor) or row.dtype != want.dtype or not torch.equal(row, want):
                    return f"field {name} row {r}: values differ"
    return None


class ClientRole:
    """One client process of the workload (writer or reader), over a module with upstream's API.

    ``api``: ``transfer_queue`` (upstream) or ``transferqueue_jvm`` (this project).
    """

    def __init__(self, api: str, role: str):
        self.api_name = api
        self.role = role
        self.tq = importlib.import_module(api)
        self.case: Case | None = None
        self.batch = None
        self.columns: dict | None = None
        self.keys: list[str] = []
        self.profiler: cProfile.Profile | None = None

    def initialize(self, conf: Any) -> int:
        import os
        if self.api_name == "transfer_queue":
            from omegaconf import OmegaConf
            conf = OmegaConf.create(conf)
        self.tq.init(conf)
        return os.getpid()

    def prepare(self, case: dict) -> int:
        """Generates the case's data: the writer's batch, or the reader's copy to check against."""
        c = Case(case["preset"], case["complex"], case["batch"], case["fields"], case["seq_len"], case["seed"])
        self.case = c
        self.keys = keys_of(c)
        self.batch = None
        self.columns = None
        if self.role == "writer":
            self.batch = make_batch(c)
        else:
            self.columns = make_columns(c)
        return c.nbytes()

    def profile(self, on: bool) -> None:
        """Starts (or stops) a cProfile of the timed calls."""
        if on and self.profiler is None:
            self.profiler = cProfile.Profile()
        elif not on:
            self.profiler = None

    def _timed(self, fn, *args, **kwargs):
        p = self.profiler
        t0 = time.perf_counter()
        if p is not None:
            p.enable()
        try:
            out = fn(*args, **kwargs)
        finally:
            if p is not None:
                p.disable()
        return time.perf_counter() - t0, out

    def put(self) -> float:
        secs, _ = self._timed(self.tq.kv_batch_put, keys=self.keys, partition_id=PARTITION, fields=self.batch)
        return secs

    def list(self) -> tuple[float, list[str]]:
        secs, info = self._timed(self.tq.kv_list, partition_id=PARTITION)
        return secs, list(info.get(PARTITION, {}).keys())

    def get(self, keys: list[str], check: bool) -> tuple[float, str | None]:
        """Reads ``keys``; with ``check`` compares what came back (outside the timed call).

        Returns (seconds, None when equal or unchecked, else what differs)."""
        secs, result = self._timed(self.tq.kv_batch_get, keys=keys, partition_id=PARTITION)
        problem = None
        if check:
            if len(keys) != self.case.batch:
                problem = f"kv_list returned {len(keys)} keys, {self.case.batch} were put"
            else:
                problem = verify(result, self.columns, keys)
        del result
        return secs, problem

    def clear(self, keys: list[str]) -> float:
        secs, _ = self._timed(self.tq.kv_clear, keys=keys, partition_id=PARTITION)
        return secs

    def profile_report(self, top: int = 25) -> str:
        if self.profiler is None:
            return ""
        out = io.StringIO()
        stats = pstats.Stats(self.profiler, stream=out)
        stats.sort_stats("cumulative").print_stats(top)
        out.write("\n--- by own time ---\n")
        stats.sort_stats("tottime").print_stats(top)
        return out.getvalue()

    def close(self) -> None:
        try:
            self.tq.close()
        except Exception as e:  # reported, the process ends anyway
            return f"close failed: {e!r}"

    def ping(self) -> int:
        return 1


def segment_bytes(case_bytes: int) -> int:
    """Object-store memory per store node / Mooncake client: at least 512 MiB, and room for a batch
    split over two of them with 25 % headroom."""
    need = int(math.ceil(case_bytes * 1.25 / 2)) + (64 << 20)
    return max(512 << 20, ((need + (1 << 20) - 1) >> 20) << 20)
