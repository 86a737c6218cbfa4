"""What the config-option helpers (`_agent.select_option`, `config_request`...) take from this
package's ACP v2 schema, where the versions name things differently: an option's id is its
`config_id` (ACP v1: `id`), and a value id is set by `SetSessionConfigOptionRequestTypeId`
(ACP v1: `SetSessionConfigOptionRequestTypeValueId`). The generator copies it in as `_config_options.py`."""

from __future__ import annotations

from ._runtime import MaybeUndefined
from .models import (
    SessionConfigId,
    SessionConfigOption,
    SessionConfigOptionCategory,
    SessionConfigOptionType,
    SessionConfigValueId,
    SetSessionConfigOptionRequestTypeId,
)


def option(
    config_id: SessionConfigId,
    name: str,
    kind: SessionConfigOptionType,
    category: MaybeUndefined[SessionConfigOptionCategory | str],
    description: MaybeUndefined[str],
) -> SessionConfigOption:
    """The config option `config_id` of `kind` (select or boolean)."""
    return SessionConfigOption(config_id=config_id, name=name, category=category, description=description, type=kind)


def option_id(option: SessionConfigOption) -> SessionConfigId:
    """The id of `option`."""
    return option.config_id


def value_id(value: SessionConfigValueId) -> SetSessionConfigOptionRequestTypeId:
    """The request's variant that sets a select option to its value `value`."""
    return SetSessionConfigOptionRequestTypeId(value=value)
