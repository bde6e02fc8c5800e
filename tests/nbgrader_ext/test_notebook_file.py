"""autograder/nbgrader_ext/notebook_file.py: a notebook file's bytes decoded without trusting them.

Every file here is one an editor writes, or one a hostile student could: the decoder gives the
JSON object in it, or refuses it with a cause in words, and never raises anything else.
"""
from __future__ import annotations

import json
import os
import sys

import pytest

from autograder.nbgrader_ext import notebook_file
from autograder.nbgrader_ext.notebook_file import MAX_DEPTH, NotANotebook, decode_json, read_json_file

NOTEBOOK = {"cells": [{"cell_type": "code", "source": "print('héllo, ✓')", "metadata": {}}], "metadata": {}, "nbformat": 4,
            "nbformat_minor": 5}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"])
def test_every_encoding_json_allows_with_or_without_a_byte_order_mark(encoding):
    data = json.dumps(NOTEBOOK, ensure_ascii=False, indent=1).encode(encoding)
    assert decode_json(data) == NOTEBOOK


def test_a_byte_order_mark_before_utf16_little_endian_text_is_dropped():
    data = b"\xff\xfe" + json.dumps(NOTEBOOK, ensure_ascii=False).encode("utf-16-le")
    assert decode_json(data) == NOTEBOOK


def test_lone_surrogates_become_replacement_characters_in_values_and_keys():
    raw = '{"cells": [{"source": "a \\ud800 b", "metadata": {"\\udfff": "\\ud83d\\ude00 pair"}}]}'
    decoded = decode_json(raw.encode("ascii"))
    cell = decoded["cells"][0]
    assert cell["source"] == "a \ufffd b"
    assert cell["metadata"] == {"\ufffd": "\U0001F600 pair"}  # a proper pair is one character
    json.dumps(decoded, ensure_ascii=False).encode("utf-8")  # writable again


def test_bytes_that_are_not_utf8_become_replacement_characters():
    data = json.dumps(NOTEBOOK, ensure_ascii=False).encode("utf-8").replace("é".encode(), b"\xe9")  # Latin-1 é
    assert decode_json(data)["cells"][0]["source"] == "print('h\ufffdllo, ✓')"


def dumps_deep(value) -> str:
    """json.dumps of a value nested near the recursion limit, whatever this test runs under (a
    pytest-xdist worker starts tests deeper in the stack than a plain run)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 5000))
    try:
        return json.dumps(value)
    finally:
        sys.setrecursionlimit(limit)


def test_deep_nesting_is_cut_at_the_bound_and_the_rest_is_kept():
    deep = {"a": 1}
    for _ in range(950):
        deep = {"a": deep}
    notebook = dict(NOTEBOOK, metadata={"deep": deep})
    decoded = decode_json(dumps_deep(notebook).encode())
    assert decoded["cells"] == NOTEBOOK["cells"]
    level, depth = decoded["metadata"], 2
    while isinstance(level, dict):
        level, depth = level.get("deep", level.get("a")), depth + 1
    assert level is None and depth == MAX_DEPTH + 1  # the containers below the bound became null


def test_nesting_far_past_any_recursion_limit_is_read():
    decoded = decode_json(('{"cells": [], "x": ' + "[" * 200_000 + "]" * 200_000 + "}").encode())
    assert decoded["cells"] == []


def test_brackets_inside_strings_are_text():
    notebook = dict(NOTEBOOK, cells=[{"cell_type": "markdown", "source": "[" * 5000 + '\\"{' * 100, "metadata": {}}])
    assert decode_json(json.dumps(notebook).encode()) == notebook


def test_nan_and_infinity_become_null():
    assert decode_json(b'{"a": NaN, "b": [Infinity, -Infinity]}') == {"a": None, "b": [None, None]}


@pytest.mark.parametrize("raw, cause", [
    (b"[1, 2]", "not a notebook: the file is a JSON list"),
    (b'"cells"', "not a notebook: the file is a JSON string"),
    (b"4.5", "not a notebook: the file is a JSON number"),
    (b"null", "not a notebook: the file is a JSON null"),
    (b"true", "not a notebook: the file is a JSON boolean"),
    (b"{\n  \"cells\": [,]\n}", "not a notebook: not JSON (line 2)"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a notebook: not JSON (line 1)"),
    (b"  \n", "the file is empty"),
])
def test_what_is_no_json_object_is_refused_with_its_cause(raw, cause):
    with pytest.raises(NotANotebook) as refused:
        decode_json(raw)
    assert str(refused.value) == cause


def test_files_that_are_too_large_or_not_regular_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(notebook_file, "MAX_NOTEBOOK_BYTES", 1024)
    path = tmp_path / "big.ipynb"
    path.write_bytes(b'{"x": "' + b"y" * 2000 + b'"}')
    with pytest.raises(NotANotebook, match=r"^the file is 0.0 MiB, over the 0.000976562 MiB a notebook may be$"):
        read_json_file(path)
    link = tmp_path / "link.ipynb"
    link.symlink_to(path)
    with pytest.raises(NotANotebook, match=r"^not a regular file \(a symbolic link\)$"):
        read_json_file(link)
    with pytest.raises(NotANotebook, match=r"^not a regular file$"):
        read_json_file(tmp_path)
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)  # opening it would block
    with pytest.raises(NotANotebook, match=r"^not a regular file$"):
        read_json_file(fifo)
    with pytest.raises(NotANotebook, match=r"^the file cannot be read \(No such file or directory\)$"):
        read_json_file(tmp_path / "missing.ipynb")


def with_image_outputs(megabytes: int) -> dict:
    notebook = json.loads(json.dumps(NOTEBOOK))
    notebook["cells"][0]["outputs"] = [{"output_type": "display_data", "metadata": {},
                                        "data": {"image/png": "iVBORw0KGgo" * (megabytes * 2**20 // 11)}}]
    return notebook


def test_outputs_are_not_the_answer_a_notebook_full_of_images_reads_as_its_code(tmp_path):
    """80 MiB of images in the outputs (more than a notebook's code and text may be) is read,
    out of the grader's process, as the same notebook without them."""
    path = tmp_path / "images.ipynb"
    path.write_text(json.dumps(with_image_outputs(80)))
    small = tmp_path / "small.ipynb"
    small.write_text(json.dumps(with_image_outputs(0)))
    expected = {**NOTEBOOK, "cells": [{**NOTEBOOK["cells"][0], "outputs": []}]}
    assert read_json_file(path) == read_json_file(small) == expected


def test_json_that_needs_more_memory_than_the_reader_has_is_refused_in_words(tmp_path, monkeypatch):
    """Millions of tiny values: parsing takes far more memory than the text's size. The child
    that parses it runs out of its own memory, not the grader's."""
    monkeypatch.setattr(notebook_file, "PARSE_MEMORY_BYTES", 400 * 2**20)
    path = tmp_path / "tiny-values.ipynb"
    path.write_text('{"cells": [' + "[]," * (3 * 2**20) + "[]]}")
    with pytest.raises(NotANotebook, match=r"^the file's JSON needs more than the 400 MiB of memory"):
        read_json_file(path)


def test_a_large_file_is_refused_for_the_same_causes_as_a_small_one(tmp_path):
    path = tmp_path / "list.ipynb"
    path.write_text(json.dumps([with_image_outputs(1)]))
    with pytest.raises(NotANotebook, match=r"^not a notebook: the file is a JSON list$"):
        read_json_file(path)
