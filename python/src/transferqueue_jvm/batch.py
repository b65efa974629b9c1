"""Batches in and out: what a put accepts and how a get returns each column kind.

Column kinds are the Java side's (``ColumnKind``: 0 dense, 1 jagged, 2 object), and **the kind put
is the kind got**:

============================================  =======  ==========================================
put value                                     kind     get returns
============================================  =======  ==========================================
``torch.Tensor`` ``[B, ...]``, numpy array    dense    ``torch.Tensor`` ``[B, ...]`` (1-D stays 1-D)
nested tensor, list/tuple of tensors          jagged   nested tensor (jagged layout where the rows
                                                       allow it, else strided), or a list of tensors
``NonTensorStack``, list of other values      object   ``NonTensorStack`` (with tensordict) or list
============================================  =======  ==========================================

With ``always_nested=True`` tensor fields come back as upstream returns them: nested jagged tensors,
rows of 0 dimensions stacked dense.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from . import dtypes
from .errors import InvalidArgumentError, ShapeMismatchError, UnknownDtypeError

try:  # optional: batches come back as TensorDict when it is installed
    from tensordict import NonTensorData, NonTensorStack, TensorDict
except ImportError:  # pragma: no cover - exercised only without tensordict
    TensorDict = None
    NonTensorStack = None
    NonTensorData = None

DENSE, JAGGED, OBJECT = 0, 1, 2


@dataclass
class Column:
    """One field of a batch to put."""

    name: str
    kind: int
    rows: int
    tensor: torch.Tensor | None = None          # dense: contiguous [B, ...]
    row_tensors: list[torch.Tensor] | None = None  # jagged: contiguous rows
    values: list | None = None                  # object
    dtype: torch.dtype | None = None

    def row_shape(self, i: int) -> tuple[int, ...]:
        if self.kind == DENSE:
            return tuple(self.tensor.shape[1:])
        return tuple(self.row_tensors[i].shape)

    def row_view(self, i: int) -> memoryview:
        """The bytes of row ``i`` (a view of the column's memory)."""
        if self.kind == DENSE:
            return dtypes.byte_view(self.tensor[i])
        return dtypes.byte_view(self.row_tensors[i])

    def row_views(self, positions: list[int]) -> list[memoryview]:
        """The bytes of the rows at ``positions``: one view of a dense column's memory, sliced per row."""
        if self.kind != DENSE:
            return [dtypes.byte_view(self.row_tensors[p]) for p in positions]
        n = self.row_nbytes(0)
        if n == 0:
            return [memoryview(b"")] * len(positions)
        flat = dtypes.byte_view(self.tensor)
        return [flat[p * n:(p + 1) * n] for p in positions]

    def row_shapes(self, positions: list[int]) -> list[list[int]]:
        """The shapes of the rows at ``positions`` (a dense column's rows share one list)."""
        if self.kind == DENSE:
            return [list(self.tensor.shape[1:])] * len(positions)
        return [list(self.row_tensors[p].shape) for p in positions]

    def row_nbytes(self, i: int) -> int:
        if self.kind == DENSE:
            return self.tensor[0].numel() * self.tensor.element_size() if self.rows else 0
        t = self.row_tensors[i]
        return t.numel() * t.element_size()


def _is_tensorish(v) -> bool:
    return isinstance(v, torch.Tensor) or (isinstance(v, np.ndarray) and v.dtype != np.dtype(object))


def _check_cpu(name: str, t: torch.Tensor) -> torch.Tensor:
    if t.dtype not in _KNOWN:
        _unknown(name, t.dtype)
    if t.device.type != "cpu":
        t = t.cpu()
    return t


_KNOWN = {dtypes.to_torch(n) for n in dtypes.NAMES}


def _unknown(name, dtype):
    raise UnknownDtypeError(f"field '{name}': dtype {dtype} is not supported; supported: {', '.join(dtypes.NAMES)}")


def column_of(name: str, value) -> Column:
    """The column of one put value (see the module table)."""
    if NonTensorStack is not None and isinstance(value, NonTensorStack):
        vals = value.tolist()
        return Column(name, OBJECT, len(vals), values=list(vals))
    if NonTensorData is not None and isinstance(value, NonTensorData):
        vals = value.tolist() if hasattr(value, "tolist") else [value.data]
        if not isinstance(vals, list):
            vals = [vals]
        return Column(name, OBJECT, len(vals), values=vals)
    if isinstance(value, torch.Tensor) and value.is_nested:
        rows = [_check_cpu(name, r).contiguous() for r in value.unbind()]
        return Column(name, JAGGED, len(rows), row_tensors=rows, dtype=value.dtype)
    if _is_tensorish(value):
        t = _check_cpu(name, dtypes.as_tensor(value))
        if t.dim() == 0:
            raise ShapeMismatchError(f"field '{name}': a 0-dimensional tensor has no batch dimension")
        return Column(name, DENSE, int(t.shape[0]), tensor=t.contiguous(), dtype=t.dtype)
    if isinstance(value, (list, tuple)):
        if value and all(_is_tensorish(v) for v in value):
            rows = [_check_cpu(name, dtypes.as_tensor(v)).contiguous() for v in value]
            dts = {r.dtype for r in rows}
            if len(dts) != 1:
                raise InvalidArgumentError(f"field '{name}': rows of different dtypes {sorted(map(str, dts))}")
            return Column(name, JAGGED, len(rows), row_tensors=rows, dtype=rows[0].dtype)
        return Column(name, OBJECT, len(value), values=list(value))
    raise InvalidArgumentError(
        f"field '{name}': value of type {type(value).__name__} is not a column (a tensor [B, ...], a numpy array, "
        "a nested tensor, a list of tensors, a NonTensorStack or a list of values)")


def columns_of(data) -> dict[str, Column]:
    """The columns of a TensorDict or dict, in its field order; every column has the same row count."""
    if TensorDict is not None and isinstance(data, TensorDict):
        items = [(k, data.get(k)) for k in data.keys()]
    elif isinstance(data, dict):
        items = list(data.items())
    else:
        raise InvalidArgumentError(f"data must be a TensorDict or a dict of columns, got {type(data).__name__}")
    cols: dict[str, Column] = {}
    for name, value in items:
        if not isinstance(name, str):
            raise InvalidArgumentError(f"field names must be str, got {name!r}")
        cols[name] = column_of(name, value)
    counts = {c.rows for c in cols.values()}
    if len(counts) > 1:
        raise ShapeMismatchError("fields have different row counts: "
                                 + ", ".join(f"'{c.name}': {c.rows}" for c in cols.values()))
    if TensorDict is not None and isinstance(data, TensorDict) and data.batch_dims > 0 and cols:
        if counts != {int(data.batch_size[0])}:
            raise ShapeMismatchError(f"batch_size {data.batch_size[0]} does not match the row count {counts}")
    return cols


def row_count(data) -> int:
    """The number of rows of put data (TensorDict batch size or the columns' row count)."""
    if TensorDict is not None and isinstance(data, TensorDict) and data.batch_dims > 0:
        return int(data.batch_size[0])
    cols = columns_of(data)
    return next(iter(cols.values())).rows if cols else 0


def apply_data_parser(data, parser):
    """Runs upstream's ``data_parser`` on put data, in this process (the Java storage units cannot run
    Python code): it gets ``{field: batched values}`` (a dense column as its tensor, other columns as
    lists of rows) and must change the values in place, keeping the fields and each column's length.
    Returns the data to put (a dict)."""
    if parser is None:
        return data
    if not callable(parser):
        raise TypeError(f"data_parser must be callable, got {type(parser).__name__}")
    cols = columns_of(data)
    plain: dict[str, Any] = {}
    for name, col in cols.items():
        if col.kind == DENSE:
            plain[name] = col.tensor
        elif col.kind == JAGGED:
            plain[name] = list(col.row_tensors)
        else:
            plain[name] = list(col.values)
    lengths = {name: len(v) for name, v in plain.items()}
    try:
        out = parser(plain)
    except Exception as e:
        from .errors import DataParserFailedError
        raise DataParserFailedError(f"data_parser failed: {type(e).__name__}: {e}") from e
    if out is not None and out is not plain:
        plain = out
    from .errors import DataParserFailedError
    if not isinstance(plain, dict) or set(plain) != set(lengths):
        raise DataParserFailedError(f"data_parser must keep the fields {sorted(lengths)}, got "
                                    f"{sorted(plain) if isinstance(plain, dict) else type(plain).__name__}")
    for name, n in lengths.items():
        if len(plain[name]) != n:
            raise DataParserFailedError(f"data_parser changed the length of field '{name}' from {n} to "
                                        f"{len(plain[name])}")
    return plain


def schema_of(col: Column, positions: list[int] | None = None) -> dict[str, Any]:
    """The field schema of a column, or of its rows at ``positions`` (read in place, not selected),
    as the Java side extracts it (``FieldSchema.of``)."""
    if col.kind == DENSE:
        return {"dtype": col.dtype, "shape": torch.Size(col.tensor.shape[1:]), "is_nested": False,
                "is_non_tensor": False}
    if col.kind == JAGGED:
        rows = col.row_tensors if positions is None else [col.row_tensors[p] for p in positions]
        return {"dtype": col.dtype, "shape": None, "is_nested": True, "is_non_tensor": False,
                "per_sample_shapes": [tuple(r.shape) for r in rows]}
    return {"dtype": None, "shape": None, "is_nested": False, "is_non_tensor": True}


def schema_of_columns(cols: dict[str, Column]) -> dict[str, dict]:
    return {name: schema_of(c) for name, c in cols.items()}


def select_rows(col: Column, positions: list[int]) -> Column:
    """The rows of a column at ``positions``: views, except for a dense column whose positions are not
    a run of consecutive rows (its rows are gathered into a new tensor)."""
    if col.kind == DENSE:
        first, n = (positions[0], len(positions)) if positions else (0, 0)
        if n and positions == list(range(first, first + n)):
            return Column(col.name, DENSE, n, tensor=col.tensor[first:first + n], dtype=col.dtype)
        idx = torch.as_tensor(positions, dtype=torch.long)
        return Column(col.name, DENSE, len(positions), tensor=col.tensor.index_select(0, idx), dtype=col.dtype)
    if col.kind == JAGGED:
        return Column(col.name, JAGGED, len(positions), row_tensors=[col.row_tensors[p] for p in positions],
                      dtype=col.dtype)
    return Column(col.name, OBJECT, len(positions), values=[col.values[p] for p in positions])


# ---------------------------------------------------------------- results

def _consecutive_values(rows: list[torch.Tensor]) -> torch.Tensor | None:
    """The rows as one ``[sum of first dims, ...]`` tensor over their memory, when they are contiguous
    views that follow each other in one storage (as a get receives a jagged column); else None."""
    first = rows[0]
    at = first.storage_offset()
    ptr = first.untyped_storage().data_ptr()
    for r in rows:
        if not r.is_contiguous() or r.untyped_storage().data_ptr() != ptr or r.storage_offset() != at:
            return None
        at += r.numel()
    inner = tuple(first.shape[1:])
    shape = (sum(r.shape[0] for r in rows),) + inner
    strides = torch.empty(shape, device="meta").stride()
    return first.as_strided(shape, strides, first.storage_offset())


def jagged_result(rows: list[torch.Tensor], as_list: bool = False):
    """A jagged column: a nested tensor (jagged layout where possible, else strided) or a list."""
    if as_list or not rows:
        return list(rows)
    dims = {r.dim() for r in rows}
    if dims == {0}:
        return torch.stack(rows)
    if len(dims) == 1 and rows[0].dim() >= 1 and len({tuple(r.shape[1:]) for r in rows}) == 1:
        values = _consecutive_values(rows)
        if values is not None:  # the rows received into one allocation: a view of it, no copy
            lengths = torch.tensor([0] + [r.shape[0] for r in rows], dtype=torch.int64)
            return torch.nested.nested_tensor_from_jagged(values, offsets=lengths.cumsum(0))
        return torch.nested.as_nested_tensor(rows, layout=torch.jagged)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.nested.nested_tensor(rows)


def make_result(columns: dict[str, Any], n: int, kinds: dict[str, int], always_nested: bool = False,
                jagged_as_list: bool = False):
    """The batch a get returns: a TensorDict when tensordict is installed, else a dict."""
    out: dict[str, Any] = {}
    for name, value in columns.items():
        kind = kinds[name]
        if kind == DENSE and always_nested:
            if value.dim() == 1:
                out[name] = value
            else:
                out[name] = torch.nested.as_nested_tensor(list(value.unbind(0)), layout=torch.jagged)
        elif kind == JAGGED:
            out[name] = jagged_result(value, as_list=jagged_as_list and TensorDict is None)
        elif kind == OBJECT and TensorDict is not None:
            out[name] = NonTensorStack(*value) if value else NonTensorStack()
        else:
            out[name] = value
    if TensorDict is None:
        return out
    return TensorDict(out, batch_size=[n])
