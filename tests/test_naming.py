from generator.naming import attribute_name, class_name, error_constructor_name, member_name, method_name


def test_attribute_names_are_snake_case_of_the_wire_name():
    assert attribute_name("toolCallId") == "tool_call_id"
    assert attribute_name("mcpServers") == "mcp_servers"
    assert attribute_name("HTTPHeader") == "http_header"


def test_meta_loses_its_underscore():
    assert attribute_name("_meta") == "meta"


def test_keywords_get_a_trailing_underscore_but_soft_keywords_do_not():
    assert attribute_name("class") == "class_"
    assert attribute_name("from") == "from_"
    assert attribute_name("type") == "type"
    assert attribute_name("match") == "match"


def test_names_never_start_with_a_digit():
    assert attribute_name("2fa") == "f_2fa"
    assert class_name("2fa") == "T2fa"


def test_class_names_join_parts_in_pascal_case():
    assert class_name("SessionUpdate", "tool_call_update") == "SessionUpdateToolCallUpdate"
    assert class_name("DiffChange", "operation") == "DiffChangeOperation"


def test_enum_members_are_upper_snake_case():
    assert member_name("switch_mode") == "SWITCH_MODE"
    assert member_name("text/plain") == "TEXT_PLAIN"
    assert member_name("2.0") == "V_2_0"
    assert member_name("") == "EMPTY"


def test_method_names_join_the_words_of_the_json_rpc_method():
    assert method_name("session/prompt") == "session_prompt"
    assert method_name("session/set_config_option") == "session_set_config_option"
    assert method_name("session/setMode") == "session_set_mode"
    assert method_name("$/cancel_request") == "cancel_request"
    assert method_name("initialize") == "initialize"
    assert method_name("import/from") == "import_from"
    assert method_name("global") == "global_"
    assert method_name("2fa/check") == "m_2fa_check"


def test_error_constructors_are_the_lowercased_member():
    assert error_constructor_name("INVALID_PARAMS") == "invalid_params"
    assert error_constructor_name("IMPORT") == "import_"
