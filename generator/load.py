"""Read the schema file into typed nodes that know their JSON pointer.

Nodes wrap datamodel-code-generator's `JsonSchemaObject`; `build` reads
them through `Node` so every error can name the exact place in the schema.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typing import TYPE_CHECKING

from generator.errors import GenerationError

if TYPE_CHECKING:
    from datamodel_code_generator.parser.jsonschema import JsonSchemaObject

# JsonSchemaObject attribute → JSON Schema keyword, where they differ.
_KEYWORD_OF_FIELD = {"ref": "$ref"}


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


@dataclass(frozen=True)
class Node:
    """One schema node (an object or a boolean schema) and its JSON pointer."""

    pointer: str
    schema: JsonSchemaObject | bool

    @property
    def is_true(self) -> bool:
        """`true` or `{}`: any JSON value."""
        return self.schema is True or (not isinstance(self.schema, bool) and not self.keywords)

    @property
    def keywords(self) -> frozenset[str]:
        if isinstance(self.schema, bool):
            return frozenset()
        present = {_KEYWORD_OF_FIELD.get(name, name) for name in self.schema.model_fields_set}
        present.discard("extras")
        return frozenset(present | set(self.schema.extras))

    def value(self, keyword: str) -> Any:
        """A keyword's raw value (annotations, `const`, `x-*`), or None."""
        if isinstance(self.schema, bool):
            return None
        if keyword in self.schema.extras:
            return self.schema.extras[keyword]
        return getattr(self.schema, keyword, None)

    @property
    def description(self) -> str | None:
        text = self.value("description")
        return text if isinstance(text, str) and text.strip() else None

    @property
    def title(self) -> str | None:
        text = self.value("title")
        return text if isinstance(text, str) else None

    @property
    def types(self) -> tuple[str, ...]:
        """`type` as a tuple, in schema order."""
        declared = None if isinstance(self.schema, bool) else self.schema.type
        if declared is None:
            return ()
        return (declared,) if isinstance(declared, str) else tuple(declared)

    @property
    def ref(self) -> str | None:
        return None if isinstance(self.schema, bool) else self.schema.ref

    @property
    def required(self) -> tuple[str, ...]:
        return () if isinstance(self.schema, bool) else tuple(self.schema.required or ())

    def properties(self) -> list[tuple[str, Node]]:
        if isinstance(self.schema, bool) or not self.schema.properties:
            return []
        base = f"{self.pointer}/properties"
        return [(name, Node(f"{base}/{_escape(name)}", child)) for name, child in self.schema.properties.items()]

    def children(self, keyword: str) -> list[Node]:
        """The subschemas of `anyOf`, `oneOf` or `allOf`."""
        items = [] if isinstance(self.schema, bool) else getattr(self.schema, keyword) or []
        return [Node(f"{self.pointer}/{keyword}/{index}", child) for index, child in enumerate(items)]

    def child(self, keyword: str) -> Node | None:
        """The subschema of `items`, `not` or `additionalProperties`."""
        raw = self.value(keyword)
        if raw is None:
            return None
        if isinstance(raw, dict):
            raw = _parse(f"{self.pointer}/{keyword}", raw)
        elif not isinstance(raw, (bool, _schema_object())):
            raise GenerationError(f"{self.pointer}/{keyword}", "expected a schema")
        return Node(f"{self.pointer}/{keyword}", raw)


@dataclass(frozen=True)
class Schema:
    path: Path
    sha256: str
    definitions: dict[str, Node]  # `$defs`, in schema order
    root: Node  # the document itself, without its `$defs` (JSON-RPC envelopes live here)


def _schema_object() -> type[JsonSchemaObject]:
    """datamodel-code-generator's node class, imported on first use: the import
    takes about half a second, which `check` skips when the IR is cached."""
    from datamodel_code_generator.parser.jsonschema import JsonSchemaObject

    return JsonSchemaObject


def _parse(pointer: str, raw: Any) -> JsonSchemaObject | bool:
    from pydantic import ValidationError

    if isinstance(raw, bool):
        return raw
    if not isinstance(raw, dict):
        raise GenerationError(pointer, f"expected a schema object or boolean, found {type(raw).__name__}")
    try:
        return _schema_object().model_validate(raw)
    except ValidationError as error:
        problem = error.errors()[0]
        where = "/".join(str(part) for part in problem["loc"])
        raise GenerationError(f"{pointer}/{where}", problem["msg"]) from None


def load_schema(path: Path) -> Schema:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise GenerationError(str(path), f"cannot read the schema: {error.strerror}") from None
    try:
        document = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise GenerationError(str(path), f"not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise GenerationError("#", "the schema must be a JSON object")
    definitions = document.get("$defs", {})
    if not isinstance(definitions, dict):
        raise GenerationError("#/$defs", "expected an object of definitions")
    return Schema(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        definitions={
            name: Node(f"#/$defs/{_escape(name)}", _parse(f"#/$defs/{_escape(name)}", raw))
            for name, raw in definitions.items()
        },
        root=Node("#", _parse("#", {key: value for key, value in document.items() if key != "$defs"})),
    )
