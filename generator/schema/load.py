"""Read the schema file into nodes that know their JSON pointer.

A node is a schema object or boolean exactly as the JSON has it, so every
keyword keeps its own name (`$id`, `prefixItems`...) and `build` can name the
exact place of any problem. `Schema.resolve` follows a `$ref` as draft 2020-12
says: resolved against the base URI of its place (the nearest `$id` above it, or
the document's own URI), to a JSON pointer or `$anchor` of any schema resource of
this document or of another one read from a local directory.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit, uses_relative

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


# An `$anchor` (and `$dynamicAnchor`) name, as draft 2020-12's meta-schema has it.
ANCHOR = re.compile(r"[A-Za-z_][-A-Za-z0-9._]*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def join_uri(base: str, reference: str) -> str:
    """`reference` resolved against the absolute URI `base` (RFC 3986, section 5.2),
    its fragment kept. `urljoin` does it for hierarchical schemes (http, file...); a
    fragment-only reference is joined here for every scheme (`urn:` included, which
    urljoin leaves alone), and any other relative reference against a base whose scheme
    has no paths (`urn:`, `tag:`) is a ValueError."""
    if _SCHEME.match(reference):
        return reference
    if not reference or reference.startswith("#"):
        return base.partition("#")[0] + reference
    scheme = base.partition(":")[0].lower()
    if scheme not in uses_relative or not scheme:
        raise ValueError(
            f"a relative reference cannot be resolved against the base URI {base} ({scheme}: has no paths)"
        )
    return urljoin(base, reference)


def pointer_tokens(pointer: str) -> list[str]:
    """The tokens of a node's pointer, unescaped; for a node of another document
    (`http://host/dir/name.json#/$defs/x`), the last name in its URI first (`name`, `$defs`, `x`)."""
    uri, _, fragment = pointer.partition("#")
    tokens = [unescape(token) for token in fragment.split("/") if token]
    if uri:
        last = next((part for part in reversed(re.split(r"[/:]", uri)) if part), uri)
        tokens.insert(0, last.removesuffix(".json"))
    return tokens


@dataclass(frozen=True)
class Document:
    """A schema document read from disk: the one generated from, or one a `$ref` names."""

    uri: str  # where it was retrieved from (its base URI unless its root has an `$id`)
    path: Path
    sha256: str


class Resources:
    """The schema resources (`$id`s) and anchors of the documents loaded so far, by
    absolute URI, and the base URI of every schema node. Documents other than the first
    are read when a `$ref` first names them, from the local directory its URI prefix is
    mapped to (or from a `file:` URI), never from the network; their nodes' pointers
    start with their URI (`http://host/a.json#/$defs/x`), the first one's with `#`."""

    def __init__(self, schema_dirs: Sequence[tuple[str, Path]]) -> None:
        # longest prefix first, so that a mapping of `http://host/a/` wins over one of `http://host/`
        self.schema_dirs = sorted(schema_dirs, key=lambda row: -len(row[0]))
        self.resources: dict[str, Node] = {}  # absolute URI (no fragment) → its resource's root
        self.anchors: dict[str, Node] = {}  # `uri#name` → the schema with that `$anchor`
        self.dynamic_anchors: dict[str, Node] = {}  # `uri#name` → the schema with that `$dynamicAnchor`
        self.bases: dict[str, str] = {}  # pointer of a schema node → its base URI
        self.documents: list[Document] = []  # the documents read besides the first, in order

    def add_document(self, uri: str, prefix: str, raw: Any) -> Node:
        """Index the document `raw` retrieved from `uri`; its root node."""
        root = Node(prefix, raw)
        self._add_resource(uri, root, prefix)
        self._index(raw, prefix, uri)
        return root

    def _add_resource(self, uri: str, node: Node, where: str) -> None:
        other = self.resources.setdefault(uri, node)
        if other.pointer != node.pointer:
            raise GenerationError(where, f"the URI {uri} is also the $id of {other.pointer}: $ids must be unique")

    def _index(self, raw: Any, pointer: str, base: str) -> None:
        if not isinstance(raw, dict):
            self.bases[pointer] = base
            return
        ident = raw.get("$id")
        if ident is not None:
            where = f"{pointer}/$id"
            if not isinstance(ident, str):
                raise GenerationError(where, "expected a string (a URI reference)")
            try:
                uri, _, fragment = join_uri(base, ident).partition("#")
            except ValueError as error:
                raise GenerationError(where, f"$id {ident!r}: {error}") from None
            if fragment:
                raise GenerationError(where, f"$id {ident!r} has a fragment; name a place with $anchor instead")
            self._add_resource(uri, Node(pointer, raw), where)
            base = uri
        self.bases[pointer] = base
        for keyword, table in (("$anchor", self.anchors), ("$dynamicAnchor", self.dynamic_anchors)):
            name = raw.get(keyword)
            if name is None:
                continue
            if not isinstance(name, str) or not ANCHOR.fullmatch(name):
                raise GenerationError(f"{pointer}/{escape(keyword)}", f"expected an anchor name, found {name!r}")
            other = table.setdefault(f"{base}#{name}", Node(pointer, raw))
            if other.pointer != pointer:
                raise GenerationError(
                    f"{pointer}/{escape(keyword)}", f"{base} has {keyword} {name!r} at {other.pointer} too"
                )
        for keyword, value in raw.items():
            place = f"{pointer}/{escape(keyword)}"
            if keyword in SCHEMA_KEYWORDS:
                self._index(value, place, base)
            elif keyword in SCHEMA_LIST_KEYWORDS and isinstance(value, list):
                for index, item in enumerate(value):
                    self._index(item, f"{place}/{index}", base)
            elif keyword in SCHEMA_MAP_KEYWORDS and isinstance(value, dict):
                for key, item in value.items():
                    self._index(item, f"{place}/{escape(key)}", base)

    def base_at(self, pointer: str) -> str:
        """The base URI at `pointer`: its node's, else that of the nearest node above it."""
        while pointer not in self.bases and "/" in pointer:
            pointer = pointer.rpartition("/")[0]
        return self.bases[pointer]

    def resolve(self, pointer: str, ref: str) -> Node:
        """The node `ref` (a `$ref` found at `pointer`) names, resolved against the base URI there."""
        base = self.base_at(pointer)
        try:
            target = join_uri(base, ref)
        except ValueError as error:
            raise GenerationError(pointer, f"$ref {ref!r}: {error}") from None
        uri, _, fragment = target.partition("#")
        resource = self.resources.get(uri) or self._read(pointer, ref, uri)
        fragment = unquote(fragment)
        if not fragment:
            return resource
        if fragment.startswith("/"):
            return _walk(pointer, ref, resource, [unescape(token) for token in fragment[1:].split("/")])
        found = self.anchors.get(f"{uri}#{fragment}") or self.dynamic_anchors.get(f"{uri}#{fragment}")
        if found is None:
            if not ANCHOR.fullmatch(fragment):
                raise GenerationError(
                    pointer, f"unsupported form of $ref {ref!r}: not a JSON pointer or an anchor name"
                )
            raise GenerationError(pointer, f"dangling $ref {ref!r}: {uri} has no $anchor {fragment!r}")
        return found

    def local_path(self, uri: str) -> Path | None:
        """The file that holds the document `uri`: by the longest mapped prefix, or a `file:` URI's path."""
        for prefix, directory in self.schema_dirs:
            if uri.startswith(prefix):
                relative = unquote(uri[len(prefix) :])
                parts = relative.split("/")
                if not relative or "?" in relative or any(part in ("..", ".") for part in parts):
                    return None
                return directory.joinpath(*parts)
        split = urlsplit(uri)
        if split.scheme == "file" and split.netloc in ("", "localhost"):
            return Path(unquote(split.path))
        return None

    def _read(self, pointer: str, ref: str, uri: str) -> Node:
        path = self.local_path(uri)
        if path is None:
            raise GenerationError(
                pointer,
                f"$ref {ref!r} names the document {uri}, which no schema-dir maps to a local directory "
                "(--schema-dir PREFIX=DIR); nothing is fetched from the network",
            )
        data, raw = _read_json(path, pointer, f"$ref {ref!r}: {path}")
        self.documents.append(Document(uri, path, hashlib.sha256(data).hexdigest()))
        if not isinstance(raw, (dict, bool)):
            raise GenerationError(pointer, f"$ref {ref!r}: {path} is not a schema (an object or a boolean)")
        root = self.add_document(uri, f"{uri}#", raw)
        return self.resources.get(uri, root)


def _walk(pointer: str, ref: str, resource: Node, tokens: list[str]) -> Node:
    """The node at the JSON pointer `tokens` below `resource`."""
    node: Any = resource.schema
    for token in tokens:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            raise GenerationError(pointer, f"dangling $ref {ref!r}: the document has no {token!r} there")
    if not isinstance(node, (dict, bool)):
        raise GenerationError(pointer, f"$ref {ref!r} names a {type(node).__name__}, not a schema")
    return Node(resource.pointer + "".join("/" + escape(token) for token in tokens), node)


def _read_json(path: Path, where: str, what: str) -> tuple[bytes, Any]:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise GenerationError(where, f"{what}: cannot read it ({error.strerror})") from None
    try:
        return data, json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise GenerationError(where, f"{what}: not valid JSON: {error}") from None


@dataclass(frozen=True)
class Schema:
    path: Path
    sha256: str
    definitions: dict[str, Node]  # `$defs`, in schema order
    root: Node  # the document itself, without its `$defs` (JSON-RPC envelopes live here)
    document: dict[str, Any]
    resources: Resources = field(default_factory=lambda: Resources(()), compare=False)

    def resolve(self, pointer: str, ref: str) -> Node:
        """The node `ref` (a `$ref` found at `pointer`) names: a JSON pointer or an anchor
        of any schema resource, of this document or (read on first use) of another."""
        return self.resources.resolve(pointer, ref)

    @property
    def documents(self) -> tuple[Document, ...]:
        """The other documents read so far (by `$ref`s resolved)."""
        return tuple(self.resources.documents)


def load_schema(path: Path, schema_dirs: Sequence[tuple[str, Path]] = ()) -> Schema:
    """The schema at `path`; `$ref`s to other documents are read from the directories
    `schema_dirs` maps URI prefixes to (and from `file:` URIs)."""
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
    resources = Resources(schema_dirs)
    root = resources.add_document(path.resolve().as_uri(), "#", document)
    return Schema(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        definitions=dict(root.properties("$defs")),
        root=root.only(frozenset(document) - {"$defs"}),
        document=document,
        resources=resources,
    )
