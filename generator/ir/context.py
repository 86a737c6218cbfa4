"""What the parts of `build` share: the schema, the named types built so far and the
Python names they claim; and the calls the parts make back for nested schemas."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from generator.errors import GenerationError
from generator.ir import naming
from generator.ir.assertions import Checks
from generator.ir.model import Alias, NamedType, ObjectType, Ref, Route, TypeExpr
from generator.schema.load import Node, Schema, pointer_tokens


class Context:
    """The named types of the module being built, by Python name, and who claimed each name."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.definitions = schema.definitions
        self.definition_at = {node.pointer: name for name, node in schema.definitions.items()}
        self.types: dict[str, NamedType] = {}
        self.claimed: dict[str, str] = {}  # Python name → JSON pointer of its owner
        self.invented: dict[tuple[str, tuple[str, ...]], str] = {}  # `invent`'s answers
        self.python_names = {name: naming.type_name(name) for name in self.definitions}
        self.referenced: dict[str, str] = {}  # pointer of a `$ref` target outside `$defs` → its type
        self.pending: list[tuple[str, Node]] = []  # `$ref` targets outside `$defs` still to build
        for name, node in self.definitions.items():
            self.claim(self.python_names[name], node.pointer)

    def claim(self, name: str, pointer: str) -> None:
        if name in self.claimed and self.claimed[name] != pointer:
            raise GenerationError(
                pointer, f"the Python name {name} is also produced by {self.claimed[name]}; rename one of them"
            )
        self.claimed[name] = pointer

    def holder(self, name: str) -> str | None:
        """Who holds `name`, which a made-up type may then not take: the type that claimed
        it or its builder class's name, the type whose builder class it is, or the
        generated package; None when it is free."""
        if name in self.claimed:
            return self.claimed[name]
        if name in naming.RESERVED_TYPE_NAMES:
            return "the generated package"
        if naming.builder_name(name) in self.claimed:
            return f"{self.claimed[naming.builder_name(name)]} (the name of its builder)"
        owner = name.removesuffix("Builder")
        if naming.builder_name(owner) == name and owner in self.claimed:
            return f"the builder of {self.claimed[owner]}"
        return None

    def invent(self, pointer: str, *candidates: str) -> str:
        """The name of the inline type at `pointer`, made up by the generator: the first
        candidate it already has or that is free, else the name of its place in the schema
        (`naming.position_name`), else an error saying who holds each. The same call gives
        the same name (a schema may be built twice: an `allOf` part merged, then checked);
        the name of a place goes to one call only, so two types at one pointer (`X` and the
        `XAnyOf` its checks use) do not share it."""
        key = (pointer, candidates)
        if key not in self.invented:
            self.invented[key] = self._free_name(pointer, candidates)
        return self.invented[key]

    def _free_name(self, pointer: str, candidates: tuple[str, ...]) -> str:
        for candidate in candidates:
            if self.claimed.get(candidate) == pointer:
                return candidate
        position = self.position_name(pointer)
        names = list(dict.fromkeys((*candidates, position)))
        for name in names:
            if self.holder(name) is None:
                self.claimed[name] = pointer
                return name
        taken = ", ".join(f"{name} by {self.holder(name)}" for name in names)
        raise GenerationError(
            pointer,
            f"every Python name made up for this schema is taken ({taken}); "
            f"rename what takes {position}, the name of its place in the schema",
        )

    def position_name(self, pointer: str) -> str:
        """`naming.position_name` of `pointer`: after its `$defs` entry's Python name."""
        tokens = pointer_tokens(pointer)
        if pointer.startswith("#") and tokens[:1] == ["$defs"] and len(tokens) > 1 and tokens[1] in self.python_names:
            return naming.position_name(self.python_names[tokens[1]], tokens[2:])
        return naming.position_name(None, tokens)

    def register(self, named: NamedType) -> Ref:
        self.claim(named.name, named.pointer)
        self.types[named.name] = named
        return Ref(named.name)

    def resolve_ref(self, node: Node) -> str:
        """The type a `$ref` names: a `$defs` entry, or any other schema of the document."""
        target = self.target(node)
        if target.pointer in self.definition_at:
            return self.definition_at[target.pointer]
        if target.pointer not in self.referenced:
            name = self.invent(target.pointer, naming.pointer_name("Ref", pointer_tokens(target.pointer)))
            self.referenced[target.pointer] = name
            self.pending.append((name, target))
        return self.referenced[target.pointer]

    def ref_name(self, node: Node) -> str:
        """The Python name of the type a `$ref` names."""
        name = self.resolve_ref(node)
        return self.python_names[name] if name in self.definitions else name

    def target(self, node: Node) -> Node:
        """The schema a `$ref` names."""
        return self.schema.resolve(f"{node.pointer}/$ref", node.ref or "")

    def check_alias_cycles(self) -> None:
        for named in self.types.values():
            seen = [named.name]
            target = named.target if isinstance(named, Alias) else None
            while isinstance(target, Ref) and isinstance(self.types[target.name], Alias):
                if target.name in seen:
                    raise GenerationError(named.pointer, f"alias cycle: {' → '.join([*seen, target.name])}")
                seen.append(target.name)
                target = self.types[target.name].target  # type: ignore[union-attr]

    def check_module_names(self) -> None:
        """No two types define the same name in models.py (`Foo`'s builder and a `FooBuilder`...)."""
        owners: dict[str, NamedType] = {}
        for named in self.types.values():
            has_builder = isinstance(named, ObjectType) and named.base is None
            for name in naming.module_names(named.name, has_builder=has_builder):
                other = owners.setdefault(name, named)
                if other is not named:
                    raise GenerationError(
                        named.pointer, f"the Python name {name} is also produced by {other.pointer}; rename one of them"
                    )


class Nested(Protocol):
    """The calls the parts of the builder make back for nested schemas (`shapes.Shapes`)."""

    context: Context

    def expr(self, node: Node, hint: str, *, allow_not: bool = False) -> TypeExpr:
        """What a property, item or alias holds; `hint` names inline named types."""

    def definition(self, name: str) -> NamedType:
        """The named type of the `$defs` entry `name`, built on first use."""

    def checks(
        self, node: Node, used: Iterable[str], hint: str, *, also: Iterable[Node] = (), required: Iterable[str] = ()
    ) -> Checks | None:
        """The keywords of `node` its structural type did not take (`used`), as run-time checks."""

    def union(
        self,
        name: str,
        node: Node,
        variants: list[Node],
        route: Route | None,
        pointer: str | None = None,
        *,
        exclusive: bool,
        used: set[str] | None,
    ) -> Ref:
        """The union of `variants` (see `unions.Unions.union`)."""
