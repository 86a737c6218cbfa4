"""Read the schema file into nodes that know their JSON pointer.

A node is a schema object or boolean exactly as the JSON has it, so every
keyword keeps its own name (`$id`, `prefixItems`...) and `build` can name the
exact place of any problem. `Schema.resolve` follows a `$ref` to any JSON
pointer or `$anchor` of the document.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from generator.errors import GenerationError

# Keywords whose value is one subschema, a list of subschemas, or a map of them.
SCHEMA_KEYWORDS = frozenset(
    {
        "additionalProperties",
        "items",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
    }
)
SCHEMA_LIST_KEYWORDS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
SCHEMA_MAP_KEYWORDS = frozenset({"properties", "patternProperties", "$defs", "dependentSchemas"})


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _check_schema(pointer: str, raw: Any) -> None:
    if not isinstance(raw, (dict, bool)):
        raise GenerationError(pointer, f"expected a schema (an object or a boolean), found {type(raw).__name__}")


@dataclass(frozen=True, eq=False)
class Node:
    """One schema node (an object or a boolean schema) and its JSON pointer."""

    pointer: str
    schema: dict[str, Any] | bool

    @property
    def is_true(self) -> bool:
        """`true` or `{}` (annotations aside, which build checks): any JSON value."""
        return self.schema is True or self.schema == {}

    @property
    def keywords(self) -> frozenset[str]:
        return frozenset(self.schema) if isinstance(self.schema, dict) else frozenset()

    def value(self, keyword: str) -> Any:
        """A keyword's raw value, or None."""
        return self.schema.get(keyword) if isinstance(self.schema, dict) else None

    def only(self, keywords: frozenset[str]) -> Node:
        """The same place with only `keywords` (what is left beside an applicator)."""
        assert isinstance(self.schema, dict)
        return Node(self.pointer, {key: value for key, value in self.schema.items() if key in keywords})

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
        declared = self.value("type")
        if declared is None:
            return ()
        types = (declared,) if isinstance(declared, str) else tuple(declared) if isinstance(declared, list) else None
        if not types or not all(isinstance(name, str) for name in types) or len(set(types)) != len(types):
            raise GenerationError(f"{self.pointer}/type", "expected a type name or a list of distinct type names")
        return types

    @property
    def ref(self) -> str | None:
        ref = self.value("$ref")
        if ref is not None and not isinstance(ref, str):
            raise GenerationError(f"{self.pointer}/$ref", "expected a string")
        return ref

    @property
    def required(self) -> tuple[str, ...]:
        required = self.value("required")
        if required is None:
            return ()
        if not isinstance(required, list) or not all(isinstance(key, str) for key in required):
            raise GenerationError(f"{self.pointer}/required", "expected an array of strings")
        return tuple(required)

    def properties(self, keyword: str = "properties") -> list[tuple[str, Node]]:
        """The named subschemas of `properties` (or `patternProperties`, `$defs`, `dependentSchemas`)."""
        raw = self.value(keyword)
        if raw is None:
            return []
        if not isinstance(raw, dict):
            raise GenerationError(f"{self.pointer}/{keyword}", "expected an object of schemas")
        base = f"{self.pointer}/{escape(keyword)}"
        for name, child in raw.items():
            _check_schema(f"{base}/{escape(name)}", child)
        return [(name, Node(f"{base}/{escape(name)}", child)) for name, child in raw.items()]

    def children(self, keyword: str) -> list[Node]:
        """The subschemas of `anyOf`, `oneOf`, `allOf` or `prefixItems`."""
        raw = self.value(keyword)
        if raw is None:
            return []
        if not isinstance(raw, list) or (not raw and keyword != "prefixItems"):
            raise GenerationError(f"{self.pointer}/{keyword}", "expected a non-empty array of schemas")
        for index, child in enumerate(raw):
            _check_schema(f"{self.pointer}/{keyword}/{index}", child)
        return [Node(f"{self.pointer}/{keyword}/{index}", child) for index, child in enumerate(raw)]

    def child(self, keyword: str) -> Node | None:
        """The subschema of `items`, `not`, `additionalProperties`..."""
        raw = self.value(keyword)
        if raw is None:
            return None
        _check_schema(f"{self.pointer}/{keyword}", raw)
        return Node(f"{self.pointer}/{keyword}", raw)


@dataclass(frozen=True)
class Schema:
    path: Path
    sha256: str
    definitions: dict[str, Node]  # `$defs`, in schema order
    root: Node  # the document itself, without its `$defs` (JSON-RPC envelopes live here)
    document: dict[str, Any]

    def resolve(self, pointer: str, ref: str) -> Node:
        """The node `ref` (a `$ref` found at `pointer`) names: `#/json/pointer` or `#anchor`."""
        if not ref.startswith("#"):
            raise GenerationError(pointer, f"unsupported form of $ref {ref!r}: only `#` JSON pointers and anchors")
        if ref == "#" or ref.startswith("#/"):
            node: Any = self.document
            tokens = [unescape(unquote(token)) for token in ref[2:].split("/")] if ref != "#" else []
            for token in tokens:
                if isinstance(node, dict) and token in node:
                    node = node[token]
                elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                    node = node[int(token)]
                else:
                    raise GenerationError(pointer, f"dangling $ref {ref!r}: the document has no {token!r} there")
            if not isinstance(node, (dict, bool)):
                raise GenerationError(pointer, f"$ref {ref!r} names a {type(node).__name__}, not a schema")
            return Node("#" + "".join("/" + escape(token) for token in tokens), node)
        if not ref[1:].replace("-", "_").replace(".", "_").isidentifier():
            raise GenerationError(pointer, f"unsupported form of $ref {ref!r}: not a JSON pointer or an anchor name")
        found = _anchor(self.document, "#", ref[1:])
        if found is None:
            raise GenerationError(pointer, f"dangling $ref {ref!r}: no schema has $anchor {ref[1:]!r}")
        return found


def _anchor(raw: Any, pointer: str, name: str) -> Node | None:
    """The schema below `raw` whose `$anchor` is `name`."""
    if not isinstance(raw, dict):
        return None
    if raw.get("$anchor") == name:
        return Node(pointer, raw)
    for keyword, value in raw.items():
        if keyword in SCHEMA_KEYWORDS:
            found = _anchor(value, f"{pointer}/{keyword}", name)
        elif keyword in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
            found = next(
                (
                    hit
                    for index, item in enumerate(value)
                    if (hit := _anchor(item, f"{pointer}/{keyword}/{index}", name))
                ),
                None,
            )
        elif keyword in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
            found = next(
                (
                    hit
                    for key, item in value.items()
                    if (hit := _anchor(item, f"{pointer}/{keyword}/{escape(key)}", name))
                ),
                None,
            )
        else:
            continue
        if found is not None:
            return found
    return None


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
    root = Node("#", document)
    return Schema(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        definitions=dict(root.properties("$defs")),
        root=root.only(frozenset(document) - {"$defs"}),
        document=document,
    )
