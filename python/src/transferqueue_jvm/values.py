"""Object values (docs/PROTOCOL.md section 10) and packed buffers (section 9.1).

An object value is a msgpack **main frame** plus **aux frames** that hold the bytes of the tensors
nested in it: a tensor is msgpack extension 3 whose payload is ``[dtype, shape, bufferIndex]``,
``bufferIndex`` counting from 1 (frame 0 is the main frame). Supported Python values: None, bool,
int (in [-2^63, 2^64 - 1]), float (float64), str, bytes (and bytearray, memoryview), list and tuple
(arrays), dict (maps, keys neither dicts nor tensors), torch tensors and numpy arrays (tensors),
numpy scalars (their Python value) and :class:`OpaqueValue` (extension 1 or 2 kept verbatim).
Anything else is refused with :class:`InvalidArgumentError`: nothing is pickled.
"""

from __future__ import annotations

import struct
import threading
from dataclasses import dataclass

import msgpack
import numpy as np
import torch

from . import dtypes, wire
from .errors import CorruptDataError, InvalidArgumentError

EXT_OPAQUE = 1
EXT_CALLABLE = 2
EXT_TENSOR = 3
EXT_NESTED_TENSOR = 4
EXT_NDARRAY = 5
MAX_DEPTH = 256
MAX_RANK = 64


@dataclass(frozen=True)
class OpaqueValue:
    """An extension value this client does not interpret (1: upstream pickle, 2: callable).

    It is read and written verbatim, never unpickled.
    """

    ext_type: int
    payload: bytes


_CURRENT = threading.local()


def _encoder_default(obj):
    """The ``default`` of this thread's reused value packer: the encoder packing now decides."""
    return _CURRENT.encoder._default(obj)


class _Encoder:
    def __init__(self):
        self.tensors: list[torch.Tensor] = []

    def _default(self, obj):
        if isinstance(obj, (torch.Tensor, np.ndarray)):
            return self._tensor(dtypes.as_tensor(obj))
        if isinstance(obj, OpaqueValue):
            return msgpack.ExtType(obj.ext_type, obj.payload)
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, (bytearray, memoryview)):
            return bytes(obj)
        raise TypeError(f"value of type {type(obj).__module__}.{type(obj).__qualname__} cannot be encoded; "
                        "supported: None, bool, int, float, str, bytes, list, tuple, dict, torch.Tensor, "
                        "numpy.ndarray (nothing is pickled)")

    def _tensor(self, t: torch.Tensor):
        if t.is_nested:
            raise TypeError("nested tensors cannot be stored inside object values; store them as a field")
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dim() > MAX_RANK:
            raise TypeError(f"tensor of rank {t.dim()} > {MAX_RANK}")
        t = t.contiguous()
        self.tensors.append(t)
        payload = wire.packb([dtypes.name_of(t.dtype), list(t.shape), len(self.tensors)])
        return msgpack.ExtType(EXT_TENSOR, payload)

    def encode(self, value, what: str) -> bytes:
        packer = wire.reused_packer("values", use_bin_type=True, use_single_float=False, default=_encoder_default,
                                    strict_types=False)
        _CURRENT.encoder = self
        try:
            _check(value, 0, "$")
            return packer.pack(value)
        except InvalidArgumentError:
            raise
        except (TypeError, ValueError, OverflowError, UnicodeEncodeError) as e:
            raise InvalidArgumentError(f"{what}: {e}") from None
        finally:
            _CURRENT.encoder = None


def _check(value, depth: int, path: str):
    """Depth, integer range, map keys and strings, with the path of what is refused."""
    if depth > MAX_DEPTH:
        raise InvalidArgumentError(f"value at {path} nests deeper than {MAX_DEPTH} lists and maps (a cycle?)")
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return
    if isinstance(value, int):
        if value < -(1 << 63) or value > (1 << 64) - 1:
            raise InvalidArgumentError(f"integer {value} at {path} is outside the encodable range [-2^63, 2^64 - 1]")
        return
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidArgumentError(
                f"string at {path} is not valid Unicode: lone surrogate at index {e.start}") from None
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check(v, depth + 1, f"{path}[{i}]")
        return
    if isinstance(value, dict):
        for k, v in value.items():
            step = f"{path}[{k!r}]"
            if isinstance(k, (dict, torch.Tensor, np.ndarray)):
                raise InvalidArgumentError(f"map key of type {type(k).__name__} at {step} cannot be encoded")
            _check(k, depth + 1, step)
            _check(v, depth + 1, step)


def encode_value(value, what: str = "object value") -> tuple[bytes, list[torch.Tensor]]:
    """Encodes one value: the main frame and the (contiguous) tensors of its aux frames."""
    enc = _Encoder()
    main = enc.encode(value, what)
    return main, enc.tensors


def encode_column(rows, what: str = "object column") -> tuple[bytes, list[torch.Tensor]]:
    """Encodes an object column: one msgpack array of the row values."""
    return encode_value(list(rows), what)


def _tensor_from(buf, dtype: torch.dtype, shape: list[int]) -> torch.Tensor:
    n = 1
    for d in shape:
        n *= d
    nbytes = n * dtypes.size_of(dtype)
    if len(buf) != nbytes:
        raise CorruptDataError(f"tensor of {dtype} {shape} needs {nbytes} bytes, its aux frame has {len(buf)}")
    if nbytes == 0:
        return torch.empty(shape, dtype=dtype)
    if not isinstance(buf, bytearray):
        buf = bytearray(buf)
    return torch.frombuffer(buf, dtype=torch.uint8).view(dtype).reshape(shape)


def decode_value(main, aux) -> object:
    """Decodes a main frame whose tensors' bytes are ``aux`` (a list of buffers, aux frame 1 first)."""
    aux = list(aux)

    def hook(code, data):
        if code == EXT_TENSOR:
            try:
                spec = msgpack.unpackb(data, raw=False)
                dtype_name, shape, index = spec[0], spec[1], spec[2]
                dtype = dtypes.to_torch(dtype_name)
                if not 1 <= index <= len(aux):
                    raise CorruptDataError(f"tensor names aux frame {index} of {len(aux)}")
                buf = aux[index - 1]
                if len(spec) == 5:
                    buf = memoryview(buf)[spec[3]:spec[3] + spec[4]]
                elif len(spec) != 3:
                    raise CorruptDataError(f"tensor extension of {len(spec)} elements")
                return _tensor_from(buf, dtype, list(shape))
            except CorruptDataError:
                raise
            except Exception as e:
                raise CorruptDataError(f"malformed tensor extension: {e}") from None
        if code in (EXT_OPAQUE, EXT_CALLABLE):
            return OpaqueValue(code, bytes(data))
        raise CorruptDataError(f"extension type {code} is not supported by this version")

    try:
        return msgpack.unpackb(bytes(main), raw=False, strict_map_key=False, ext_hook=hook, use_list=True)
    except CorruptDataError:
        raise
    except Exception as e:
        raise CorruptDataError(f"malformed object value: {e}") from None


# ---- packed buffers (section 9.1) ----

def packed_size(main: bytes, tensors) -> int:
    """Bytes of the packed buffer of a value."""
    n = 1 + len(tensors)
    return 4 + 8 * n + len(main) + sum(t.numel() * t.element_size() for t in tensors)


def pack_parts(main: bytes, tensors) -> list:
    """The packed buffer as a list of buffers (index, main frame, then each tensor's bytes)."""
    sizes = [len(main)] + [t.numel() * t.element_size() for t in tensors]
    n = len(sizes)
    index = bytearray(4 + 8 * n)
    struct.pack_into("<I", index, 0, n)
    offset = len(index)
    for i, size in enumerate(sizes):
        struct.pack_into("<II", index, 4 + 8 * i, offset, size)
        offset += size
    return [bytes(index), main] + [dtypes.byte_view(t) for t in tensors]


def pack(main: bytes, tensors) -> bytes:
    """The packed buffer as one bytes object."""
    return b"".join(bytes(p) for p in pack_parts(main, tensors))


def unpack(buf) -> tuple[memoryview, list[memoryview]]:
    """Splits a packed buffer into its main frame and aux frames (views, no copy)."""
    view = memoryview(buf)
    try:
        (n,) = struct.unpack_from("<I", view, 0)
        if n < 1 or 4 + 8 * n > len(view):
            raise CorruptDataError(f"packed buffer of {len(view)} bytes announces {n} items")
        items = []
        for i in range(n):
            offset, size = struct.unpack_from("<II", view, 4 + 8 * i)
            if offset + size > len(view):
                raise CorruptDataError(f"packed item {i} [{offset}, +{size}) is outside {len(view)} bytes")
            items.append(view[offset:offset + size])
    except struct.error as e:
        raise CorruptDataError(f"malformed packed buffer: {e}") from None
    return items[0], items[1:]
