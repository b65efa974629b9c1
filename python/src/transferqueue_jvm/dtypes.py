"""The dtypes of the wire (PyTorch names, docs/PROTOCOL.md section 7.2) and their torch types."""

from __future__ import annotations

import numpy as np
import torch

from .errors import UnknownDtypeError

#: wire name -> (torch dtype, element size in bytes)
_BY_NAME: dict[str, tuple[torch.dtype, int]] = {
    "bool": (torch.bool, 1),
    "uint8": (torch.uint8, 1),
    "int8": (torch.int8, 1),
    "int16": (torch.int16, 2),
    "int32": (torch.int32, 4),
    "int64": (torch.int64, 8),
    "float16": (torch.float16, 2),
    "bfloat16": (torch.bfloat16, 2),
    "float32": (torch.float32, 4),
    "float64": (torch.float64, 8),
}
_BY_TORCH: dict[torch.dtype, str] = {t: name for name, (t, _) in _BY_NAME.items()}

#: every wire dtype name, in the order of the table above
NAMES: tuple[str, ...] = tuple(_BY_NAME)


def to_torch(name: str) -> torch.dtype:
    """The torch dtype of a wire name (a ``torch.`` prefix is accepted)."""
    key = name[6:] if name.startswith("torch.") else name
    entry = _BY_NAME.get(key)
    if entry is None:
        raise UnknownDtypeError(f"unknown dtype {name!r}; known: {', '.join(NAMES)}")
    return entry[0]


def name_of(dtype: torch.dtype) -> str:
    """The wire name of a torch dtype."""
    name = _BY_TORCH.get(dtype)
    if name is None:
        raise UnknownDtypeError(f"dtype {dtype} is not supported; supported: {', '.join(NAMES)}")
    return name


def size_of(dtype: torch.dtype) -> int:
    """Bytes per element."""
    return _BY_NAME[name_of(dtype)][1]


def as_tensor(value) -> torch.Tensor:
    """A torch tensor for a tensor or a numpy array (numpy memory is shared, not copied)."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype == np.dtype(object):
            raise UnknownDtypeError("numpy arrays of dtype object cannot be stored as tensors")
        if not value.flags.writeable:
            value = value.copy()
        return torch.from_numpy(np.ascontiguousarray(value))
    raise TypeError(f"not a tensor: {type(value).__name__}")


def byte_view(tensor: torch.Tensor) -> memoryview:
    """A flat memoryview of a contiguous CPU tensor's bytes, sharing its memory (no copy)."""
    if tensor.device.type != "cpu":
        raise ValueError(f"tensors must be on the CPU to be stored, got device {tensor.device}")
    if not tensor.is_contiguous():
        raise ValueError("byte_view needs a contiguous tensor")
    if tensor.numel() == 0:
        return memoryview(b"")
    flat = tensor.reshape(-1)
    if flat.dtype != torch.uint8:
        flat = flat.view(torch.uint8)
    return memoryview(flat.numpy()).cast("B")
