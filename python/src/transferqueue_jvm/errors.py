"""Errors: one exception class per server error code (docs/PROTOCOL.md section 5.1).

Every error the servers send, and every error this client raises for a refused call, is a
:class:`TQError` carrying the stable numeric ``code`` and its name ``code_name``. The classes of the
1xx group (bad input) are also :class:`ValueError`, so that scripts written for upstream's client,
which raises ``ValueError`` for bad arguments, keep working; :class:`DeadlineExceeded` is also a
:class:`TimeoutError` and :class:`ConnectionFailed` a :class:`ConnectionError`.
"""

from __future__ import annotations

import enum


class ErrorCode(enum.IntEnum):
    """The server error codes; numbers never change (``org.transferqueue.ErrorCode``)."""

    INVALID_ARGUMENT = 100
    UNKNOWN_FIELD = 101
    UNKNOWN_KEY = 102
    UNKNOWN_PARTITION = 103
    SCHEMA_CONFLICT = 104
    SHAPE_MISMATCH = 105
    UNKNOWN_DTYPE = 106
    DUPLICATE_KEY = 107
    INVALID_CONFIGURATION = 108
    CORRUPT_DATA = 109
    NOT_FOUND = 200
    ALREADY_EXISTS = 201
    CLOSED = 202
    ILLEGAL_STATE = 203
    UNSUPPORTED_OPERATION = 204
    STALE_METADATA = 205
    OUT_OF_MEMORY = 300
    CAPACITY_EXCEEDED = 301
    RESOURCE_LEAK = 302
    DEADLINE_EXCEEDED = 400
    PROTOCOL_ERROR = 401
    FRAME_TOO_LONG = 402
    UNSUPPORTED_VERSION = 403
    CONNECTION_FAILED = 404
    UNAUTHENTICATED = 405
    STORAGE_ERROR = 500
    NOTIFICATION_FAILED = 501
    DATA_PARSER_FAILED = 502
    INTERNAL = 900

    @classmethod
    def of(cls, value: int) -> "ErrorCode":
        """The code of a number; unknown numbers are INTERNAL, as the protocol says."""
        try:
            return cls(value)
        except ValueError:
            return cls.INTERNAL


class TQError(Exception):
    """Root of every error of this package: ``code`` (int) and ``code_name`` (str)."""

    code: ErrorCode = ErrorCode.INTERNAL

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        if code is not None:
            self.code = ErrorCode.of(code)
        self.message = message

    @property
    def code_name(self) -> str:
        """The name of the error code, such as ``UNKNOWN_KEY``."""
        return self.code.name

    def __str__(self) -> str:
        return f"{self.code.name} ({int(self.code)}): {self.message}"


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


_BASES: dict[ErrorCode, tuple[type, ...]] = {}
_CLASSES: dict[ErrorCode, type[TQError]] = {}


def _define(code: ErrorCode, name: str | None = None, extra: tuple[type, ...] = ()) -> type[TQError]:
    cls_name = name or _camel(code.name)
    if not cls_name.endswith("Error") and name is None:
        cls_name += "Error"
    bases: tuple[type, ...] = (TQError,) + extra
    cls = type(cls_name, bases, {"code": code, "__doc__": f"Error code {int(code)} {code.name}."})
    cls.__module__ = __name__
    _CLASSES[code] = cls
    return cls


InvalidArgumentError = _define(ErrorCode.INVALID_ARGUMENT, extra=(ValueError,))
UnknownFieldError = _define(ErrorCode.UNKNOWN_FIELD, extra=(ValueError,))
UnknownKeyError = _define(ErrorCode.UNKNOWN_KEY, extra=(ValueError,))
UnknownPartitionError = _define(ErrorCode.UNKNOWN_PARTITION, extra=(ValueError,))
SchemaConflictError = _define(ErrorCode.SCHEMA_CONFLICT, extra=(ValueError,))
ShapeMismatchError = _define(ErrorCode.SHAPE_MISMATCH, extra=(ValueError,))
UnknownDtypeError = _define(ErrorCode.UNKNOWN_DTYPE, extra=(ValueError,))
DuplicateKeyError = _define(ErrorCode.DUPLICATE_KEY, extra=(ValueError,))
InvalidConfigurationError = _define(ErrorCode.INVALID_CONFIGURATION, extra=(ValueError,))
CorruptDataError = _define(ErrorCode.CORRUPT_DATA)
NotFoundError = _define(ErrorCode.NOT_FOUND)
AlreadyExistsError = _define(ErrorCode.ALREADY_EXISTS)
ClosedError = _define(ErrorCode.CLOSED)
IllegalStateError = _define(ErrorCode.ILLEGAL_STATE)
UnsupportedOperationError = _define(ErrorCode.UNSUPPORTED_OPERATION, extra=(NotImplementedError,))
StaleMetadataError = _define(ErrorCode.STALE_METADATA)
OutOfMemoryError = _define(ErrorCode.OUT_OF_MEMORY, name="OutOfMemoryError")
CapacityExceededError = _define(ErrorCode.CAPACITY_EXCEEDED)
ResourceLeakError = _define(ErrorCode.RESOURCE_LEAK)
DeadlineExceeded = _define(ErrorCode.DEADLINE_EXCEEDED, name="DeadlineExceeded", extra=(TimeoutError,))
ProtocolError = _define(ErrorCode.PROTOCOL_ERROR)
FrameTooLongError = _define(ErrorCode.FRAME_TOO_LONG)
UnsupportedVersionError = _define(ErrorCode.UNSUPPORTED_VERSION)
ConnectionFailed = _define(ErrorCode.CONNECTION_FAILED, name="ConnectionFailed", extra=(ConnectionError,))
UnauthenticatedError = _define(ErrorCode.UNAUTHENTICATED)
StorageError = _define(ErrorCode.STORAGE_ERROR)
NotificationFailedError = _define(ErrorCode.NOTIFICATION_FAILED)
DataParserFailedError = _define(ErrorCode.DATA_PARSER_FAILED)
InternalError = _define(ErrorCode.INTERNAL)


def error_class(code: int) -> type[TQError]:
    """The exception class of an error code (unknown codes: :class:`InternalError`)."""
    return _CLASSES[ErrorCode.of(code)]


def error_for(code: int, message: str) -> TQError:
    """A new exception of the class of ``code``; an unknown code keeps its number in the message."""
    known = ErrorCode.of(code)
    if known == ErrorCode.INTERNAL and code != ErrorCode.INTERNAL:
        message = f"(unknown error code {code}) {message}"
    return _CLASSES[known](message)


__all__ = ["ErrorCode", "TQError", "error_class", "error_for"] + [c.__name__ for c in _CLASSES.values()]
