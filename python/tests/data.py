"""Test data: a batch of every dtype and column kind, and equality helpers."""

import torch

from transferqueue_jvm import dtypes

DTYPES = [dtypes.to_torch(n) for n in dtypes.NAMES]


def pattern(dtype, shape, salt=0):
    """A deterministic tensor of any dtype (bytes i*37+salt; booleans alternate)."""
    n = 1
    for d in shape:
        n *= d
    size = dtypes.size_of(dtype)
    raw = torch.tensor([(i * 37 + salt * 11 + 3) % 256 for i in range(n * size)], dtype=torch.uint8)
    if dtype == torch.bool:
        return (torch.arange(n) % 2 == salt % 2).reshape(shape)
    t = raw.view(dtype).reshape(shape)
    if dtype.is_floating_point:
        t = torch.nan_to_num(t, nan=1.0, posinf=2.0, neginf=-2.0)
    return t.clone()


def every_kind(n=3, salt=0):
    """A dict batch of n rows: a dense column of every dtype, 1-D, jagged, object values."""
    data = {f"d_{dtypes.name_of(dt)}": pattern(dt, (n, 2, 3), salt + i) for i, dt in enumerate(DTYPES)}
    data["scalar"] = pattern(torch.float64, (n,), salt)
    data["jagged"] = [pattern(torch.float32, (i + 1, 2), salt + i) for i in range(n)]
    data["objects"] = [{"i": i, "s": f"r\u00e9{i}", "b": b"\x00\x01", "l": [1, 2.5, None, True],
                        "t": pattern(torch.int32, (2,), i)} for i in range(n)]
    return data


def same_bytes(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        return False
    return bytes(dtypes.byte_view(a.contiguous())) == bytes(dtypes.byte_view(b.contiguous()))


def rows_of(value):
    """Rows of a jagged result (a nested tensor or a list)."""
    if isinstance(value, torch.Tensor) and value.is_nested:
        return list(value.unbind())
    return list(value)


def values_equal(a, b) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and same_bytes(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


def assert_batch_equal(got, expected: dict, rows=None):
    """Every field of ``expected`` (a dict batch) equals the result, kind for kind, byte for byte."""
    rows = rows if rows is not None else list(range(len(next(iter(expected.values())))))
    for name, value in expected.items():
        out = got[name]
        if isinstance(value, torch.Tensor):
            assert isinstance(out, torch.Tensor) and not out.is_nested, name
            assert same_bytes(out, value[rows]), name
        elif value and all(isinstance(v, torch.Tensor) for v in value):
            got_rows = rows_of(out)
            assert len(got_rows) == len(rows), name
            for r, g in zip(rows, got_rows):
                assert same_bytes(g, value[r]), (name, r)
        else:
            got_vals = out.tolist() if hasattr(out, "tolist") else list(out)
            assert values_equal(got_vals, [value[r] for r in rows]), (name, got_vals)
