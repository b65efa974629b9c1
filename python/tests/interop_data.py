"""The seeded data set of the interoperability tests, built exactly as tests/java/Interop.java builds
it, and an exact JSON-able dump of a batch in the layout Interop.java prints."""

from __future__ import annotations

import struct

import torch

from transferqueue_jvm import dtypes

CODES = {name: code for code, name in enumerate(dtypes.NAMES)}  # the wire dtype codes (PROTOCOL.md 7.2)


def pattern(name: str, shape: tuple[int, ...], salt: int) -> torch.Tensor:
    """Bytes ``(i * 37 + salt * 11 + 3) mod 256`` (booleans ``(i + salt) mod 2``) as a tensor."""
    dtype = dtypes.to_torch(name)
    n = 1
    for d in shape:
        n *= d
    i = torch.arange(n * dtypes.size_of(dtype), dtype=torch.int64)
    raw = ((i + salt) % 2) if dtype == torch.bool else ((i * 37 + salt * 11 + 3) % 256)
    return raw.to(torch.uint8).view(dtype).reshape(shape)


def data_set(rows: int) -> dict:
    """``{field: column}``: ``d_<dtype>`` dense, ``j_<dtype>`` jagged, ``o`` objects, ``s`` strings."""
    data: dict = {}
    for name, code in CODES.items():
        data[f"d_{name}"] = pattern(name, (rows, 2, 3), code)
    for name, code in CODES.items():
        data[f"j_{name}"] = [pattern(name, (r + 1, 2), 100 + code * 7 + r) for r in range(rows)]
    data["o"] = [{
        "i": r,
        "neg": -1_000_000_000_000 - r,
        "f": r + 0.25,
        "s": f"caf\u00e9 \u4e2d {r}",
        "b": bytes([0, 1, 255, r]),
        "none": None,
        "t": r % 2 == 0,
        "l": [1, 2.5, None, "x", [True]],
        "tensors": [pattern(name, (2, r + 1), 200 + code + r) for name, code in CODES.items()],
        "nested": {"inner": pattern("float16", (r + 1,), 300 + r)},
        "top": pattern("int64", (3,), 400 + r),
    } for r in range(rows)]
    data["s"] = [f"row {r}" for r in range(rows)]
    return data


def keys(rows: int) -> list[str]:
    return [f"k{r}" for r in range(rows)]


def select_rows(data: dict, rows: list[int]) -> dict:
    return {k: (v[rows] if isinstance(v, torch.Tensor) else [v[r] for r in rows]) for k, v in data.items()}


def _tensor(t: torch.Tensor) -> dict:
    t = t.contiguous()
    return {"dtype": dtypes.name_of(t.dtype), "shape": list(t.shape), "hex": bytes(dtypes.byte_view(t)).hex()}


def _value(v):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return {"f64": format(struct.unpack("<Q", struct.pack("<d", v))[0], "x")}
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": bytes(v).hex()}
    if isinstance(v, torch.Tensor):
        return {"tensor": _tensor(v)}
    if isinstance(v, (list, tuple)):
        return [_value(x) for x in v]
    if isinstance(v, dict):
        return {"map": {str(k): _value(x) for k, x in v.items()}}
    raise TypeError(f"no dump for {type(v).__name__}")


def dump(batch) -> dict:
    """A batch (dict, TensorDict) as Interop.java dumps one: kinds, dtypes, shapes, exact bytes."""
    out = {}
    for name in batch.keys():
        col = batch[name]
        if isinstance(col, torch.Tensor) and not col.is_nested:
            out[name] = {"kind": "dense", "tensor": _tensor(col)}
            continue
        if isinstance(col, torch.Tensor):
            rows = list(col.unbind())
        else:
            rows = col.tolist() if hasattr(col, "tolist") else list(col)
        if rows and all(isinstance(r, torch.Tensor) for r in rows):
            out[name] = {"kind": "jagged", "rows": [_tensor(r) for r in rows]}
        else:
            out[name] = {"kind": "objects", "values": [_value(r) for r in rows]}
    return out
