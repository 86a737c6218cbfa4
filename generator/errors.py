"""The one exception the generator raises for bad input, and the warnings it gives."""

from __future__ import annotations

from dataclasses import dataclass

# The stable codes of the warnings; `ignore-warnings` names them (or `code:subject`).
UNKNOWN_TYPE = "unknown-type"  # a configuration row names a type the schema does not have
UNCONFIGURED_UPSERT = "unconfigured-upsert"  # a description speaks of upserts, the config has no rule
UNROUTED_METHOD = "unrouted-method"  # a type has x-method, but no JSON-RPC envelope carries it


class GenerationError(Exception):
    """A schema (or configuration) the generator cannot turn into code.

    `pointer` is a JSON pointer into the schema (``#/$defs/Foo/properties/bar``)
    or a file path, so the message always says where the problem is.
    """

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(_one_line(f"{pointer}: {message}"))
        self.pointer = pointer
        self.message = message


def _one_line(text: str) -> str:
    """`text` with line breaks and other unprintable characters (from schema names) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


@dataclass(frozen=True)
class SchemaWarning:
    """Something the generator noticed and went on with (`generate --strict` fails on it).
    Its cause is `code` and `subject` (the `$defs` name it is about); `text` says the rest."""

    code: str
    subject: str
    text: str

    @property
    def cause(self) -> str:
        return f"{self.code}:{self.subject}"

    def __str__(self) -> str:
        return f"{self.text} [{self.code}]"
