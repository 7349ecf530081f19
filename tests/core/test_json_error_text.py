"""A malformed JSON file is named with its line and column and what is wrong in words (issue 38, item 12): json's
own message reads 'Invalid control character at', and the CLI printed 'Invalid control character at, column 17'."""

from __future__ import annotations

import json

import pytest

from ragassay import describe_json_error

from conftest import ragassay_cli


def decode_error(text: str) -> json.JSONDecodeError:
    with pytest.raises(json.JSONDecodeError) as caught:
        json.loads(text)
    return caught.value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"question": "a\tb"}', "invalid JSON at column 16: a raw control character (a tab, a line break, ...)"),
        ("{'question': 'a'}", "invalid JSON at column 2: expected a key in double quotes"),
        ('{"a": 1,}', "invalid JSON at column 9: expected a key in double quotes"),
        ('{"a" 1}', "invalid JSON at column 6: expected ':' between a key and its value"),
        ('{"a": 1 "b": 2}', "invalid JSON at column 9: expected ',' between two items"),
        ('{"a": "x', "invalid JSON at column 7: a string is not closed"),
        ('{"a": "\\q"}', "invalid JSON at column 8: an invalid backslash escape"),
        ("{} {}", "invalid JSON at column 4: more text after the end of the JSON value"),
        ("[1,]", "invalid JSON at column 4: expected a value"),
    ],
)
def test_each_json_error_reads_as_words_with_its_column(text, expected):
    described = describe_json_error(decode_error(text))
    assert described.startswith(expected), described
    assert " at," not in described and "Expecting" not in described and "Invalid" not in described


def test_without_the_column_and_for_a_value_error_that_is_not_a_decode_error():
    assert describe_json_error(decode_error("[1,]"), column=False).startswith("invalid JSON: expected a value")
    assert describe_json_error(ValueError("'utf-8' codec can't decode")) == (
        "not valid JSON ('utf-8' codec can't decode)"
    )


def test_a_dataset_line_with_a_raw_tab_names_file_line_column_and_the_fix(project):
    qa = project.parent / "qa.jsonl"
    lines = qa.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace("Who fished", "Who\tfished")
    qa.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = ragassay_cli("run", str(project))
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
    column = lines[1].index("\t") + 1
    assert f"qa.jsonl, line 2: invalid JSON at column {column}: a raw control character" in result.stderr
    assert "write it escaped (\\t, \\n" in result.stderr and "at," not in result.stderr
