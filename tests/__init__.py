"""Tests for acp-codegen; shared helpers live in tests.helpers, fixtures in conftest."""
