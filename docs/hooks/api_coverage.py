"""An mkdocs hook: after the build, every public name of `acp_v2` must have an entry of its own in
the API reference (mkdocstrings' objects.inv), in acp_v2 or, for what it re-exports from the runtime
it shares with acp_v1, in acp_runtime, or the build warns, which `--strict` fails on."""

from __future__ import annotations

import importlib
import logging
import sys
from pathlib import Path
from typing import Any

from mkdocstrings import Inventory

PACKAGE = "acp_v2"
RUNTIME = "acp_runtime"  # the runtime acp_v2 shares with acp_v1: the names it re-exports from there live there
_log = logging.getLogger(f"mkdocs.hooks.{__name__}")


def on_post_build(config: Any) -> None:
    generated = str(Path(config.config_file_path).parent / "generated")
    if generated not in sys.path:
        sys.path.insert(0, generated)
    public = importlib.import_module(PACKAGE).__all__
    with open(Path(config.site_dir) / "objects.inv", "rb") as file:
        inventory = Inventory.parse_sphinx(file, domain_filter=("py",))
    # acp_v2.<module>.<name> or acp_runtime.<module>.<name>: a module-level object of the reference
    # (priority 1: its own entry, not an alias)
    parts = [name.split(".") for name, item in inventory.items() if item.priority == 1]
    documented = {part[2] for part in parts if len(part) == 3 and part[0] in (PACKAGE, RUNTIME)}
    missing = sorted(set(public) - documented)
    if missing:
        _log.warning("the API reference (docs/api/) documents no %s.%s", PACKAGE, f", {PACKAGE}.".join(missing))
