"""The one bounded JSON reader (``uno_mk_env.files.parse_json`` / ``read_json``): size and depth
are checked before parsing, so hostile text is one line, never a ``RecursionError``."""

from __future__ import annotations

import json

import pytest

from uno_mk_env.errors import StateError
from uno_mk_env.files import (
    MAX_JSON_DEPTH,
    FileFormatError,
    json_depth,
    parse_json,
    read_json,
)


@pytest.mark.parametrize(("text", "depth"), [
    ("1", 0), ("[]", 1), ('{"a": [1, {"b": []}]}', 4), ('["[[[[", "{{"]', 1),
    (r'["\"[[[", "\\"]', 1), ("[[[]]][[]]", 3),
])
def test_json_depth_counts_brackets_outside_strings_only(text: str, depth: int) -> None:
    assert json_depth(text.encode()) == depth


def test_a_deeply_nested_text_is_one_line_not_a_recursion_error() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(FileFormatError, match=r"state string nests .* 100000 deep; at most 32"):
        parse_json(text, "state string")


def test_depth_at_the_bound_is_read_and_one_more_is_refused() -> None:
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_depth(ok.encode()) == MAX_JSON_DEPTH
    parse_json(ok, "x")
    with pytest.raises(FileFormatError, match="nests"):
        parse_json("[" + ok + "]", "x")


def test_size_is_checked_before_parsing_for_text_and_bytes() -> None:
    with pytest.raises(FileFormatError, match="larger than 10 bytes"):
        parse_json(" " * 11, "x", max_bytes=10)
    with pytest.raises(FileFormatError, match="is 11 bytes; at most 10"):
        parse_json(b" " * 11, "x", max_bytes=10)


def test_not_json_and_not_utf8_name_what_was_read() -> None:
    with pytest.raises(FileFormatError, match=r"^config is not JSON: "):
        parse_json("{'a': 1}", "config")
    with pytest.raises(FileFormatError, match="not UTF-8"):
        parse_json(b'"\xff"', "config")


def test_the_callers_error_type_is_raised() -> None:
    with pytest.raises(StateError, match="^state string is not JSON"):
        parse_json("[", "state string", error=StateError)


def test_read_json_reads_no_more_than_the_bound(tmp_path) -> None:
    big = tmp_path / "big.json"
    big.write_text(json.dumps(["x" * 1000]))
    with pytest.raises(FileFormatError, match="is 11 bytes; at most 10"):
        read_json(big, max_bytes=10)  # one byte past the bound is enough to refuse
    assert read_json(big) == ["x" * 1000]
    with pytest.raises(FileFormatError, match="cannot read 'missing'"):
        read_json(tmp_path / "none.json", "'missing'")
