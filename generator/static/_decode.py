"""`decode` and `encode`, which `models` re-exports: a generated type or a `$defs` name, read
from JSON through the package's codec (`_codec`, imported on first use), and back."""

from __future__ import annotations

from typing import Any, TypeVar, overload

from . import _runtime as _rt
from ._runtime import Model

_M = TypeVar("_M", bound=Model)


@overload
def decode(
    type_or_name: type[_M], data: Any, *, strict: bool = False, on_salvage: _rt.SalvageCallback | None = None
) -> _M: ...


@overload
def decode(
    type_or_name: Any, data: Any, *, strict: bool = False, on_salvage: _rt.SalvageCallback | None = None
) -> Any: ...


def decode(type_or_name: Any, data: Any, *, strict: bool = False, on_salvage: _rt.SalvageCallback | None = None) -> Any:
    """Decode `data` (what `json.loads` returns) as a generated type or a `$defs` name.

    Raises `DecodeError` on anything the schema does not allow; in lenient mode
    (the default) values the schema's `x-deserialize-*` hints allow to salvage
    are replaced or skipped, reported to `on_salvage` and the `logging` module."""
    return _rt.codec(__name__.rpartition(".")[0]).decode(type_or_name, data, strict, on_salvage)


def encode(value: Any) -> Any:
    """The JSON-compatible value (for `json.dumps`) of a decoded or built value."""
    return _rt.encode_value(value)
