"""acp-codegen: generate the `acp_v2` Python package from the ACP JSON Schema."""

__version__ = "0.1.0"
