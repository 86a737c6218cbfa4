"""The IR rules, each on a small hand-written schema."""

from __future__ import annotations

from generator.ir import Alias, AnyValue, EnumType, JsonObject, ListOf, Primitive, Ref, UnionType, Variant
from tests.helpers import error_for, fields, ir_of


def test_every_def_becomes_a_public_name(rules):
    for name in ("ItemId", "Port", "Color", "Size", "Item", "Shape", "Circle", "Id", "Anything"):
        assert name in rules


def test_attributes_keep_their_wire_names(rules):
    item = fields(rules["Item"])
    assert item["itemId"].name == "item_id"
    assert item["_meta"].name == "meta"
    assert item["class"].name == "class_"


def test_presence_required_optional_and_nullable(rules):
    item = fields(rules["Item"])
    assert (item["itemId"].required, item["itemId"].nullable) == (True, False)
    assert (item["label"].required, item["label"].nullable) == (True, True)
    assert (item["count"].required, item["count"].nullable) == (False, False)
    assert (item["parent"].required, item["parent"].nullable) == (False, True)


def test_allof_wrapper_resolves_to_its_target_and_keeps_the_outer_description(rules):
    item_id = fields(rules["Item"])["itemId"]
    assert item_id.type == Ref("ItemId")
    assert item_id.doc == "Its id."


def test_recursive_references_are_plain_refs(rules):
    assert fields(rules["Item"])["parent"].type == Ref("Item")


def test_integer_formats_become_bounds_combined_with_minimum(rules):
    assert rules["Port"] == Alias("Port", "#/$defs/Port", None, Primitive("int", 1, 65535, None, "uint16"))
    assert fields(rules["Item"])["count"].type == Primitive("int", 0, 2**32 - 1, None, "uint32")


def test_arrays_record_min_items_and_the_skip_hint(rules):
    assert fields(rules["Item"])["tags"].type == ListOf(Primitive("str"), min_items=1, skip_invalid_items=True)


def test_free_form_objects_and_any_values(rules):
    item = fields(rules["Item"])
    assert item["extra"].type == JsonObject()
    assert item["raw"].type == AnyValue()
    assert rules["Anything"].target == AnyValue()


def test_string_constants_with_a_final_plain_string_are_an_open_enum(rules):
    color = rules["Color"]
    assert isinstance(color, EnumType) and color.open
    assert [(m.name, m.value, m.doc) for m in color.members] == [
        ("RED", "red", "Red."),
        ("LIGHT_BLUE", "light_blue", None),
    ]
    assert not rules["Size"].open


def test_const_tagged_objects_are_a_tagged_union_with_an_open_fallback(rules):
    shape = rules["Shape"]
    assert isinstance(shape, UnionType)
    assert shape.tag_key == "kind"
    assert [(v.tag, v.type) for v in shape.variants] == [("circle", Ref("ShapeCircle")), ("square", Ref("ShapeSquare"))]
    assert shape.fallback == "ShapeOther"


def test_a_variant_wrapping_an_object_subclasses_it_and_adds_the_tag(rules):
    circle = rules["ShapeCircle"]
    assert circle.base == "Circle"
    assert (circle.tag.key, circle.tag.attribute, circle.tag.value) == ("kind", "kind", "circle")
    assert [f.wire_name for f in circle.fields] == ["radius"]


def test_an_inline_variant_gets_union_plus_tag_as_its_name(rules):
    square = rules["ShapeSquare"]
    assert square.base is None and [f.wire_name for f in square.fields] == ["side"]


def test_the_fallback_keeps_the_tag_as_a_string_field(rules):
    other = rules["ShapeOther"]
    assert fields(other)["kind"].type == Primitive("str")
    assert other.keep_unknown == "keep"


def test_untagged_unions_keep_schema_order(rules):
    assert [v.type.kind for v in rules["Id"].variants] == ["int", "str"]


def test_no_numbered_names_in_the_real_schema(tmp_path):
    from tests.helpers import V2_SCHEMA

    module = ir_of(V2_SCHEMA, tmp_path)
    assert len(module.public_names) == 262
    numbered = [t.name for t in module.types if t.name[-1].isdigit()]
    assert numbered == []


def test_a_dangling_ref_names_its_pointer(tmp_path):
    error = error_for({"$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/Nope"}}}}}, tmp_path)
    assert error.pointer == "#/$defs/A/properties/b/$ref"
    assert "dangling $ref '#/$defs/Nope'" in str(error)


def test_defs_names_that_meet_as_python_names_collide_naming_both_pointers(tmp_path):
    error = error_for({"$defs": {"Foo": {"type": "string"}, "foo": {"type": "string"}}}, tmp_path)
    assert error.pointer == "#/$defs/foo" and "#/$defs/Foo" in str(error)


def test_a_defs_name_and_a_builder_class_collide(tmp_path):
    schema = {"$defs": {"Foo": {"type": "object", "properties": {"a": {}}}, "FooBuilder": {"type": "string"}}}
    error = error_for(schema, tmp_path)
    assert "FooBuilder" in str(error) and "#/$defs/Foo" in str(error) and "#/$defs/FooBuilder" in str(error)


def test_made_up_names_step_aside_for_defs_names(tmp_path):
    schema = {
        "$defs": {
            "Shape": {
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"kind": {"const": "circle", "type": "string"}},
                        "required": ["kind"],
                    }
                ]
            },
            "ShapeCircle": {"type": "string"},
        }
    }
    types = ir_of(schema, tmp_path).by_name()
    assert isinstance(types["ShapeCircle"], Alias)
    assert [variant.type for variant in types["Shape"].variants] == [Ref("ShapeCircleVariant")]


def test_untitled_inline_variants_are_named_by_their_required_keys(tmp_path):
    schema = {
        "$defs": {
            "Shape": {
                "anyOf": [
                    {"type": "object", "properties": {"radius": {"type": "number"}}, "required": ["radius"]},
                    {"type": "object", "properties": {"side": {"type": "number"}}, "required": ["side"]},
                ]
            }
        }
    }
    variants = ir_of(schema, tmp_path).by_name()["Shape"].variants
    assert [variant.type for variant in variants] == [Ref("ShapeWithRadius"), Ref("ShapeWithSide")]


def test_inline_types_whose_content_is_the_same_are_numbered(tmp_path):
    same = {"type": "object", "properties": {"a": {"type": "string"}}}
    variants = ir_of({"$defs": {"U": {"anyOf": [same, same]}}}, tmp_path).by_name()["U"].variants
    assert [variant.type for variant in variants] == [Ref("UWithA"), Ref("UWithA2")]


def test_made_up_names_of_properties_that_meet_step_aside(tmp_path):
    inline = {"type": "object", "properties": {"x": {"type": "string"}}}
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"bC": inline}},
            "AB": {"type": "object", "properties": {"c": inline}},
        }
    }
    types = ir_of(schema, tmp_path).by_name()
    assert fields(types["A"])["bC"].type == Ref("ABC")
    assert fields(types["AB"])["c"].type == Ref("ABC2")


def test_defs_names_map_to_python_names_and_are_kept_for_decode(tmp_path):
    schema = {"$defs": {"class": {"type": "string"}, "Any": {"type": "string"}, "Ok": {"type": "string"}}}
    module = ir_of(schema, tmp_path)
    assert module.public_names == (("class", "Class"), ("Any", "Any_"), ("Ok", "Ok"))
    assert {named.name for named in module.types} == {"Class", "Any_", "Ok"}


def test_a_repeated_enum_value_is_one_member(tmp_path):
    (enum,) = ir_of({"$defs": {"E": {"enum": ["a", "b", "a"]}}}, tmp_path).types
    assert [(member.name, member.value) for member in enum.members] == [("A", "a"), ("B", "b")]


def test_properties_that_map_to_the_same_attribute_collide(tmp_path):
    error = error_for({"$defs": {"A": {"type": "object", "properties": {"fooBar": {}, "foo_bar": {}}}}}, tmp_path)
    assert "'fooBar' and 'foo_bar' both map to foo_bar" in str(error)
    assert error.pointer == "#/$defs/A/properties/foo_bar" and "#/$defs/A/properties/fooBar" in str(error)


def test_a_property_that_meets_the_tag_attribute_collides(tmp_path):
    tag = {"type": "string", "const": "a"}
    variant = {"type": "object", "properties": {"kind": tag, "Kind": {}}, "required": ["kind"]}
    error = error_for({"$defs": {"U": {"anyOf": [variant]}}}, tmp_path)
    assert "'Kind' and 'kind' both map to kind" in str(error)


def test_generation_errors_are_one_line_whatever_the_names(tmp_path):
    error = error_for({"$defs": {"a\nb": {"type": "string"}, "A\rB": {"type": "string"}}}, tmp_path)
    assert "\n" not in str(error) and "\r" not in str(error) and "\\n" in str(error)


def test_an_alias_cycle_is_an_error(tmp_path):
    error = error_for({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}}, tmp_path)
    assert "alias cycle" in str(error)


def test_an_unknown_integer_format_is_an_error(tmp_path):
    error = error_for({"$defs": {"A": {"type": "integer", "format": "uint7"}}}, tmp_path)
    assert error.pointer == "#/$defs/A/format"


def test_one_of_is_exclusive_and_any_of_is_not(tmp_path):
    variants = [{"type": "integer"}, {"type": "string"}]
    types = ir_of({"$defs": {"A": {"oneOf": variants}, "B": {"anyOf": variants}}}, tmp_path).by_name()
    assert types["A"].exclusive and not types["B"].exclusive


def test_a_ref_reaches_any_pointer_and_anchor_of_the_document(tmp_path):
    schema = {
        "$defs": {
            "A": {"type": "object", "properties": {"x": {"type": "integer"}, "y": {"$ref": "#/$defs/A/properties/x"}}},
            "B": {"$ref": "#here"},
            "C": {"$defs": {"inner": {"$anchor": "here", "type": "string"}}},
        }
    }
    types = ir_of(schema, tmp_path).by_name()
    assert fields(types["A"])["y"].type == Ref("RefDefsAPropertiesX")
    assert types["RefDefsAPropertiesX"].target == Primitive("int")
    assert types["B"].target == Ref("RefDefsCDefsInner")


def test_a_ref_to_another_document_is_an_unsupported_form(tmp_path):
    error = error_for({"$defs": {"A": {"$ref": "other.json#/x"}}}, tmp_path)
    assert error.pointer == "#/$defs/A/$ref" and "unsupported form" in error.message


def test_a_nested_any_of_of_one_null_is_null(tmp_path):
    types = ir_of({"$defs": {"A": {"anyOf": [{"anyOf": [{"type": "null"}]}]}}}, tmp_path).by_name()
    assert types["A"].variants[0].type == Primitive("none")


def test_enum_values_that_differ_in_a_control_character_get_distinct_members(tmp_path):
    (enum,) = ir_of({"$defs": {"A": {"enum": ["foo\nbar", "foo\rbar"]}}}, tmp_path).types
    assert [member.value for member in enum.members] == ["foo\nbar", "foo\rbar"]
    assert len({member.name for member in enum.members}) == 2


def test_a_fallback_not_that_excludes_exactly_the_known_tags_is_left_to_dispatch(rules):
    assert rules["ShapeOther"].checks is None


def test_a_fallback_not_that_says_something_else_is_checked_and_the_variant_is_untagged(tmp_path):
    tagged = {"type": "object", "properties": {"kind": {"type": "string", "const": "a"}}, "required": ["kind"]}
    other = {
        "type": "object",
        "properties": {"kind": {"type": "string"}},
        "required": ["kind"],
        "not": {"anyOf": [tagged, {"required": ["x"]}]},
    }
    types = ir_of({"$defs": {"U": {"anyOf": [tagged, other]}}}, tmp_path).by_name()
    assert types["U"].fallback is None
    assert types["U"].variants[1] == Variant(Ref("UOther"))
    assert types["UOther"].checks.never == ("UOtherNot",)
