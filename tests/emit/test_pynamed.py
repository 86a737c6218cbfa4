"""What the templates ask about named types (generator/emit/pynamed.py)."""

from __future__ import annotations

from generator.emit.pynamed import NamedQueries
from generator.emit.pytypes import Queries
from generator.ir.model import Module, Ref
from generator.pipeline import build_ir
from tests.support.helpers import ROOT, V2_SCHEMA

MODULE: Module = build_ir(V2_SCHEMA, "acp_v2", ROOT)
NAMED = NamedQueries(Queries(MODULE))


def test_a_tagged_union_calls_the_base_decoder_of_a_variant_that_only_adds_its_tag():
    assert NAMED.variant_decoder(Ref("SessionUpdateAgentMessageChunk")) == "_decode_ContentChunk"
    assert NAMED.variant_decoder(Ref("ContentBlockText")) == "_decode_TextContent"


def test_a_tagged_union_calls_the_own_decoder_of_a_variant_with_fields_of_its_own():
    assert NAMED.variant_decoder(Ref("SessionUpdateStateUpdate")) == "_decode_SessionUpdateStateUpdate"


def test_a_decoder_proves_present_the_keys_of_required_fields_and_its_tag():
    types = {named.name: named for named in MODULE.types}
    assert NAMED.unproven_keys(types["ContentChunk"]) == 1  # _meta; messageId and content are required
    assert NAMED.unproven_keys(types["TextContent"]) == 2  # annotations and _meta
    assert NAMED.unproven_keys(types["SessionUpdateStateUpdate"]) == 0  # its tag, checked first


def test_a_required_field_that_a_lenient_decoder_defaults_is_not_proven_present():
    listing = next(named for named in MODULE.types if named.name == "ListSessionsResponse")
    assert NAMED.unproven_keys(listing) == 3  # `sessions` becomes [] when missing
