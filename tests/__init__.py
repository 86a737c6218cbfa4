"""Tests for acp-codegen; support code lives in tests/support, fixtures and the async test hook in conftest."""
