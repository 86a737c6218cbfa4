"""generator/static/__init__.py: the static modules' text, and the names each gives its package."""

from __future__ import annotations

import ast

import pytest

from generator import static


def test_the_public_names_of_a_module_are_read_off_its_all_in_order():
    source = '__all__ = ["run_agent", "connect_http"]\nOTHER = ["not_public"]\n'
    assert static.exported_names(source) == ("run_agent", "connect_http")
    assert static.exported_names("x = 1\n") == ()


@pytest.mark.parametrize("name", ["rpc.py", "helpers_v1.py", "helpers_v2.py", "transports.py"])
def test_each_public_name_a_static_module_lists_is_one_it_defines_or_imports(name):
    source = static.source(name)
    exported = static.exported_names(source)
    assert exported and len(set(exported)) == len(exported)
    namespace: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom):
            namespace |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            namespace.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            namespace |= {target.id for target in targets if isinstance(target, ast.Name)}
    assert set(exported) <= namespace
